"""Fixtures for the local platform: a tiny app (front -> back) in a temporary catalog repository."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from faultkit.platforms.local import LocalPlatform
from faultkit.workspace import Workspace
from tests.platforms.fixture_app import write_app


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "repo"
    write_app(root)
    return Workspace(root=root, state_dir=tmp_path / "state")


@pytest.fixture
def platform(workspace: Workspace) -> Iterator[LocalPlatform]:
    p = LocalPlatform(workspace, app="fix")
    yield p
    p.down()


@pytest.fixture
def up(platform: LocalPlatform) -> LocalPlatform:
    platform.up("fix", replicas=0, timeout=30)
    return platform


