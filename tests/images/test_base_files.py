"""A base that stands for an upstream image beyond its packages (Bank of Anthos' databases start FROM
postgres, whose entrypoint initialises the database): the recipe's files, entrypoint and command, in a
base built from Debian packages on the real engine, under a service built from its own Dockerfile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.images import base
from faultkit.images.service import build_service
from faultkit.workspace import Workspace
from tests.helpers.shipped import minishop_copy

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]

UPSTREAM = "registry.example/store:1"
ENTRY = '#!/bin/sh\necho "entered as $(id -un)"\nexec "$@"\n'
RECIPE = {"suite": "bookworm", "packages": ["ca-certificates"],
          "files": {"/usr/local/bin/entry.sh": "images/entry.sh", "/etc/store/notes.txt": "images/notes.txt"},
          "entrypoint": ["entry.sh"], "cmd": ["cat", "/etc/store/greeting"]}


def test_the_recipe_files_land_executable_where_the_apps_file_is(tmp_path: Path) -> None:
    entry, notes = tmp_path / "entry.sh", tmp_path / "notes.txt"
    entry.write_text(ENTRY)
    entry.chmod(0o755)
    notes.write_text("n\n")
    root = tmp_path / "rootfs"
    base._add_files(root, (("/usr/local/bin/entry.sh", entry), ("/etc/store/notes.txt", notes)))
    assert (root / "usr/local/bin/entry.sh").read_text() == ENTRY
    assert (root / "usr/local/bin/entry.sh").stat().st_mode & 0o777 == 0o755
    assert (root / "etc/store/notes.txt").stat().st_mode & 0o777 == 0o644


def test_a_service_over_a_base_with_files_entrypoint_and_cmd_runs_through_them(tmp_path: Path,
                                                                                docker_client: Any) -> None:
    c = docker_client
    root = tmp_path / "repo"

    def edit(data: dict[str, Any]) -> None:
        data["images"]["from"] = {UPSTREAM: RECIPE}
        email = next(s for s in data["services"] if s["name"] == "email")
        email["build"] = {"lint": [], "test": []}  # no Python in this base: nothing of minishop's CI runs

    minishop_copy(root, edit)
    images = root / "apps" / "minishop" / "images"
    images.mkdir()
    (images / "entry.sh").write_text(ENTRY)
    (images / "entry.sh").chmod(0o755)
    (images / "notes.txt").write_text("kept\n")
    (root / "apps" / "minishop" / "src" / "email" / "Dockerfile").write_text(
        f"FROM {UPSTREAM}\nRUN echo hello > /etc/store/greeting\n")
    ws = Workspace(root=root, state_dir=tmp_path / "state")
    built = build_service(ws, load_app(ws, "minishop"), "email", client=c)
    try:
        assert built.ci == "none"
        assert c.containers.run(built.id, remove=True).decode() == "entered as root\nhello\n"
        out = c.containers.run(built.id, ["cat", "/etc/store/notes.txt"], remove=True).decode()
        assert out == "entered as root\nkept\n"  # a command given replaces the cmd, not the entrypoint
    finally:
        c.images.remove(built.id, force=True)
