"""An application's own Dockerfile: its FROM images read, refused when unmapped, and rewritten to the
bases images.from maps them to. The real build over such a Dockerfile is in test_upstream_build.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultkit.apps.descriptor import BaseImage, load_app
from faultkit.errors import InputError
from faultkit.images import base
from faultkit.images.service import build_bases
from faultkit.images.upstream_from import FromImage, from_images, rewrite, unmapped
from faultkit.workspace import Workspace
from tests.helpers.shipped import minishop_copy

DOCKERFILE = Path("src/web/Dockerfile")
# shaped like an upstream service's: a global ARG, a build stage, a stage used as a base, a runtime image
MULTI_STAGE = """\
ARG PY_VERSION=3.12
ARG IMAGE=python:${PY_VERSION}-slim
FROM --platform=linux/amd64 ${IMAGE} AS base
ARG PY_VERSION=3.11
FROM base AS build
RUN pip install --target /deps -r requirements.txt
from maven:3.9-eclipse-temurin-17 as jar
FROM scratch AS empty
FROM $IMAGE\r
COPY --from=build /deps /deps
"""


def test_every_from_image_is_read_with_its_line_and_stages_are_not_images():
    assert from_images(DOCKERFILE, MULTI_STAGE) == [
        FromImage(3, "python:3.12-slim"), FromImage(7, "maven:3.9-eclipse-temurin-17"),
        FromImage(9, "python:3.12-slim")]


def test_rewriting_changes_the_mapped_images_and_nothing_else():
    local = {"python:3.12-slim": "faultkit/base:bookworm-0123456789ab"}
    out = rewrite(MULTI_STAGE, local)
    changed = [(a, b) for a, b in zip(MULTI_STAGE.splitlines(keepends=True), out.splitlines(keepends=True),
                                      strict=True) if a != b]
    assert changed == [
        ("FROM --platform=linux/amd64 ${IMAGE} AS base\n",
         "FROM --platform=linux/amd64 faultkit/base:bookworm-0123456789ab AS base\n"),
        ("FROM $IMAGE\r\n", "FROM faultkit/base:bookworm-0123456789ab\r\n")]
    assert from_images(DOCKERFILE, out) == [FromImage(3, "faultkit/base:bookworm-0123456789ab"),
                                            FromImage(7, "maven:3.9-eclipse-temurin-17"),
                                            FromImage(9, "faultkit/base:bookworm-0123456789ab")]


def test_an_unmapped_image_is_refused_with_its_line():
    images = from_images(DOCKERFILE, MULTI_STAGE)
    with pytest.raises(InputError, match=r"^src/web/Dockerfile:7: FROM maven:3.9-eclipse-temurin-17 is not mapped "
                                         r"in the descriptor's images.from, and nothing is pulled"):
        unmapped(DOCKERFILE, images, {"python:3.12-slim"})
    unmapped(DOCKERFILE, images, {"python:3.12-slim", "maven:3.9-eclipse-temurin-17"})


def test_an_image_named_by_an_arg_without_a_default_is_refused():
    with pytest.raises(InputError, match=r"^src/web/Dockerfile:2: FROM \$\{BASE_IMAGE\}: an ARG without a default"):
        from_images(DOCKERFILE, "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")


def _ws_with(tmp_path: Path, images: dict[str, object]) -> Workspace:
    minishop_copy(tmp_path / "repo", lambda data: data.update(images=images), skip=("src",))
    return Workspace(root=tmp_path / "repo", state_dir=tmp_path / "state")


def test_the_descriptor_maps_from_images_to_recipes_or_images(tmp_path: Path):
    ws = _ws_with(tmp_path, {"from": {"python:3.12-slim": {"suite": "trixie", "packages": ["python3", "python3-pip"]},
                                      "eclipse-temurin:17-jre": "registry.example/temurin:17"}})
    app = load_app(ws, "minishop")
    assert app.from_images == (("python:3.12-slim", BaseImage(suite="trixie", packages=("python3", "python3-pip"))),
                               ("eclipse-temurin:17-jre", BaseImage(ref="registry.example/temurin:17")))
    assert app.base_image == BaseImage()


def test_a_from_mapping_that_is_not_a_base_is_refused_by_the_schema(tmp_path: Path):
    ws = _ws_with(tmp_path, {"from": {"python:3.12-slim": {"suite": "trixie"}}})
    with pytest.raises(InputError, match=r"app.yaml:\d+: images.from.python:3.12-slim: .* is not valid"):
        load_app(ws, "minishop")


def test_the_build_takes_each_mapped_base_by_recipe_and_the_last_froms_base_last(tmp_path: Path):
    python = BaseImage(suite="trixie", packages=("python3",))
    ws = _ws_with(tmp_path, {"from": {"python:3.12-slim": {"suite": "trixie", "packages": ["python3"]},
                                      "maven:3.9-eclipse-temurin-17": "registry.example/maven:3.9"}})
    app = load_app(ws, "minishop")
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(MULTI_STAGE)
    bases, rewritten, buildargs = build_bases(app, dockerfile)
    local = f"minishop/base:trixie-{base.recipe_digest(python)[:12]}"  # named by the app: nothing says faultkit
    assert list(bases.items()) == [("registry.example/maven:3.9", BaseImage(ref="registry.example/maven:3.9")),
                                   (local, python)]
    mapping = {"python:3.12-slim": local, "maven:3.9-eclipse-temurin-17": "registry.example/maven:3.9"}
    assert rewritten == {"Dockerfile": rewrite(MULTI_STAGE, mapping).encode()}
    assert buildargs == {}
    # a Dockerfile of faultkit's own kind keeps its ARG BASE, images.from or not
    dockerfile.write_text("ARG BASE=minishop/python-base:bookworm\nFROM ${BASE}\n")
    bases, rewritten, buildargs = build_bases(app, dockerfile)
    (ref,) = bases
    assert ref.startswith("minishop/python-base:bookworm-") and rewritten is None and buildargs == {"BASE": ref}
