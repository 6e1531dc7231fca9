"""Service images on the real Docker engine: every minishop service builds, an unchanged rebuild is
the engine's cache (same ids), a one-byte change is a new image, and everything an image says reads
like an ordinary release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from faultkit.apps.descriptor import AppDescriptor
from faultkit.catalog.rules.leakage import find_words, giveaway_words
from faultkit.images import naming
from faultkit.images.records import ImageBuild
from faultkit.images.service import build_service, buildable
from faultkit.workspace import Workspace
from tests.helpers.cli import cli_env, run_cli

# the first test pays for the session's builds: the base image (debootstrap) and eleven services
pytestmark = [pytest.mark.timeout(1800), pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]


def test_every_service_builds_with_its_ci_run_in_the_image(release: dict[str, ImageBuild], minishop: AppDescriptor,
                                                           docker_client: Any) -> None:
    assert sorted(release) == sorted(buildable(minishop)) and len(release) == 11
    for name, b in release.items():
        image = docker_client.images.get(b.id)
        assert b.id.startswith("sha256:") and b.id == image.id
        assert b.tag in image.tags and b.tag.startswith(f"minishop/{name}:1.0.0-")
        assert image.labels[naming.TITLE] == name and image.labels[naming.REVISION] == b.revision.split(":")[1]
        assert b.ci in ("passed", "passed-before") and b.size > 50_000_000
        assert image.attrs["Config"]["WorkingDir"] == "/app"
        assert image.attrs["Config"]["Cmd"] == ["python3", "main.py"]


def test_an_unchanged_rebuild_is_the_cache(release: dict[str, ImageBuild], repo_ws: Workspace,
                                           minishop: AppDescriptor, docker_client: Any) -> None:
    again = {s: build_service(repo_ws, minishop, s, client=docker_client) for s in release}
    assert {s: b.id for s, b in again.items()} == {s: b.id for s, b in release.items()}
    assert all(b.cached and b.ci == "passed-before" for b in again.values())
    assert {s: b.tag for s, b in again.items()} == {s: b.tag for s, b in release.items()}


def test_one_byte_of_source_gives_a_new_image(release: dict[str, ImageBuild], repo_ws: Workspace,
                                              minishop: AppDescriptor, docker_client: Any, src_copy: Path) -> None:
    main_py = src_copy / "email" / "main.py"
    text = main_py.read_text()
    assert text.startswith('"""')
    main_py.write_text('"""A' + text[3:])
    changed = build_service(repo_ws, minishop, "email", source_root=src_copy, client=docker_client)
    try:
        assert changed.id != release["email"].id and changed.tag != release["email"].tag
        assert not changed.cached and changed.ci == "passed"
    finally:
        docker_client.images.remove(changed.id)


def test_tags_labels_and_history_read_like_a_release(release: dict[str, ImageBuild], docker_client: Any) -> None:
    words = giveaway_words(Path(__file__).resolve().parents[2])
    for b in release.values():
        image = docker_client.images.get(b.id)
        said = [*image.tags, *(f"{k}={v}" for k, v in image.labels.items()),
                *(h.get("CreatedBy", "") for h in docker_client.api.history(b.id))]
        assert [t for t in said if find_words(t, words)] == []


def test_the_command_reports_every_service_as_json(release: dict[str, ImageBuild], repo_ws: Workspace) -> None:
    env = cli_env(FAULTKIT_ROOT=str(repo_ws.root), FAULTKIT_STATE_DIR=str(repo_ws.state_dir))
    proc = run_cli("build", "--app", "minishop", "--service", "cart", "--service", "email", "--json",
                   cwd=repo_ws.root, env=env, check=0)
    out = json.loads(proc.stdout)
    rows = {r["service"]: r for r in out["builds"]}
    assert sorted(rows) == ["cart", "email"] and out["marker"] is None
    for name, row in rows.items():
        assert row["id"] == release[name].id and row["cached"] is True
        assert set(row) >= {"service", "id", "tag", "size", "seconds", "cached"}


def test_the_platform_side_records_image_ids_as_build_ids(release: dict[str, ImageBuild], repo_ws: Workspace,
                                                          minishop: AppDescriptor, docker_client: Any) -> None:
    from faultkit.platforms.imagebuilds import ImageBuilds

    side = ImageBuilds(repo_ws, minishop, client=docker_client)
    b = side.build("email")
    assert (b.id, b.location) == (release["email"].id, release["email"].tag)
    assert release["email"].id in [x.id for x in side.builds("email")]
    assert side.build_contains(b.id, "def main(") or side.build_contains(b.id, "import ")
    assert not side.build_contains(b.id, "a text no source file holds 4f1c")


def test_a_base_image_named_in_the_descriptor_is_used_as_it_is(release: dict[str, ImageBuild], repo_ws: Workspace,
                                                               minishop: AppDescriptor, docker_client: Any) -> None:
    import dataclasses

    from faultkit.apps.descriptor import BaseImage
    from faultkit.errors import PlatformError

    mine = dataclasses.replace(minishop, base_image=BaseImage(ref=release["email"].base))
    same = build_service(repo_ws, mine, "email", client=docker_client)
    assert same.id == release["email"].id and same.cached  # the same base image: the same image
    missing = dataclasses.replace(minishop, base_image=BaseImage(ref="127.0.0.1:9/python:3.11-bookworm"))
    with pytest.raises(PlatformError, match="cannot be pulled"):
        build_service(repo_ws, missing, "email", client=docker_client)
