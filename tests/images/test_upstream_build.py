"""An application's own Dockerfile built on the real engine: a multi-stage file that starts FROM an
upstream image (as a service nobody here wrote does) builds over the base images.from maps that image
to, with the service's CI run in the image, and the source's Dockerfile is left as it was; an
unmapped FROM is refused before anything is built. The mapped base here is minishop's own, built by
the release fixture, so nothing new is made from Debian packages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.errors import InputError
from faultkit.images.records import ImageBuild
from faultkit.images.service import build_service
from faultkit.workspace import Workspace
from tests.helpers.shipped import minishop_copy

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]

UPSTREAM = "python:3.12-slim"
DOCKERFILE = f"""\
ARG IMAGE={UPSTREAM}
FROM ${{IMAGE}} AS build
WORKDIR /src
COPY *.py ./
COPY shoplib/ /deps/shoplib/
RUN python3 -m compileall -q . /deps

FROM ${{IMAGE}}
WORKDIR /app
COPY --from=build /src/ ./
COPY --from=build /deps/ /deps/
ENV PYTHONPATH=/deps
EXPOSE 8025
CMD ["python3", "main.py"]
"""


def _workspace(tmp_path: Path, mapping: dict[str, str] | None) -> Workspace:
    root = tmp_path / "repo"
    minishop_copy(root, None if mapping is None else lambda data: data["images"].update({"from": mapping}))
    (root / "apps" / "minishop" / "src" / "email" / "Dockerfile").write_text(DOCKERFILE)
    return Workspace(root=root, state_dir=tmp_path / "state")


def test_an_upstream_dockerfile_builds_over_the_mapped_base(tmp_path: Path, release: dict[str, ImageBuild],
                                                           docker_client: Any) -> None:
    c = docker_client
    base_ref = release["email"].base  # minishop's base, on the engine: what python:3.12-slim maps to here
    ws = _workspace(tmp_path, {UPSTREAM: base_ref})
    before = {i.id for i in c.images.list(all=True)}
    try:
        built = build_service(ws, load_app(ws, "minishop"), "email", client=c)
        assert built.ci == "passed" and built.base == base_ref
        layers = c.api.inspect_image(built.id)["RootFS"]["Layers"]
        base_layers = c.api.inspect_image(base_ref)["RootFS"]["Layers"]
        assert layers[:len(base_layers)] == base_layers and len(layers) > len(base_layers)
        listing = c.containers.run(built.id, ["python3", "-c", "import os; print(sorted(os.listdir('/app')))"],
                                   remove=True).decode()
        assert "'main.py'" in listing and "'shoplib'" not in listing and "'__pycache__'" in listing
        # shoplib is only on the image's own PYTHONPATH, so the tests passed in it because the in-image CI
        # put its tools before that path instead of in its place
        deps = c.containers.run(built.id, ["python3", "-c", "import shoplib; print(shoplib.__file__)"], remove=True)
        assert deps.decode().startswith("/deps/shoplib/")
        assert (ws.root / "apps" / "minishop" / "src" / "email" / "Dockerfile").read_text() == DOCKERFILE
    finally:  # the image and the build stage's intermediates: test_image_zz_left_clean counts what is left
        _remove_new(c, before)


def test_a_service_folder_that_is_a_package_is_tested_under_its_own_name(
        tmp_path: Path, release: dict[str, ImageBuild], docker_client: Any) -> None:
    c = docker_client
    ws = _workspace(tmp_path, {UPSTREAM: release["currency"].base})
    folder = ws.root / "apps" / "minishop" / "src" / "currency"
    (folder / "Dockerfile").write_text(DOCKERFILE.replace("COPY *.py ./", "COPY . ./"))
    (folder / "__init__.py").write_text("")
    (folder / "tests" / "__init__.py").write_text("")
    # as Bank of Anthos' contacts tests import contacts.contacts: in the image the folder is /app, so
    # this passes only because the in-image CI makes the folder importable by its checkout name
    (folder / "tests" / "test_as_package.py").write_text(
        "import currency.main\n\n\ndef test_imported_by_its_folder_name():\n"
        "    assert currency.main.__file__ == '/currency/main.py'\n")
    before = {i.id for i in c.images.list(all=True)}
    try:
        assert build_service(ws, load_app(ws, "minishop"), "currency", client=c).ci == "passed"
    finally:
        _remove_new(c, before)


def _remove_new(c: Any, before: set[str]) -> None:
    """Remove every image made since `before`, children first (the engine refuses a parent before them)."""
    import docker

    for _ in range(20):
        left = {i.id for i in c.images.list(all=True)} - before
        if not left:
            return
        for image in left:
            try:
                c.images.remove(image, force=True, noprune=True)
            except docker.errors.APIError:  # a parent whose child goes in this pass; the next pass takes it
                pass
    raise AssertionError(f"images left behind: {sorted(left)}")


def test_an_unmapped_from_is_refused_before_any_build(tmp_path: Path, docker_client: Any) -> None:
    ws = _workspace(tmp_path, None)
    ws_app = load_app(ws, "minishop")
    before = {i.id for i in docker_client.images.list(all=True)}
    # no images.from: a Dockerfile without ARG BASE says what to do
    with pytest.raises(InputError, match=r"email/Dockerfile: no `ARG BASE=<image>` line; .* images.from"):
        build_service(ws, ws_app, "email", client=docker_client)
    ws = _workspace(tmp_path / "other", {"eclipse-temurin:17-jre": "faultkit/base:none"})
    with pytest.raises(InputError, match=r"email/Dockerfile:2: FROM python:3.12-slim is not mapped"):
        build_service(ws, load_app(ws, "minishop"), "email", client=docker_client)
    assert {i.id for i in docker_client.images.list(all=True)} == before
