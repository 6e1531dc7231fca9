"""Fixtures for the image tests: the real Docker engine (no engine fails them: .ci/run starts one),
the repository's own minishop, and a snapshot of the engine taken before the first build."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.images import engine
from faultkit.images.records import ImageBuild
from faultkit.images.service import build_service, buildable
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class Snapshot:
    containers: frozenset[str]
    images: frozenset[str]  # every image, intermediate ones included (`docker images -a`)
    dangling: frozenset[str]
    build_cache: int  # entries of the engine's build cache (`docker system df`)


def snapshot(c: Any) -> Snapshot:
    return Snapshot(
        containers=frozenset(x.id for x in c.containers.list(all=True)),
        images=frozenset(i.id for i in c.images.list(all=True)),
        dangling=frozenset(i.id for i in c.images.list(filters={"dangling": True})),
        build_cache=len(c.df().get("BuildCache") or []),
    )


@pytest.fixture(scope="session")
def take_snapshot() -> Any:
    return snapshot


@pytest.fixture(scope="session")
def docker_client() -> Any:
    return engine.client()  # PlatformError, not a skip, when no engine answers


@pytest.fixture(scope="session")
def before(docker_client: Any) -> Snapshot:
    return snapshot(docker_client)


@pytest.fixture(scope="session")
def repo_ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(root=REPO, state_dir=tmp_path_factory.mktemp("images-state"))


@pytest.fixture(scope="session")
def minishop(repo_ws: Workspace) -> AppDescriptor:
    return load_app(repo_ws, "minishop")


@pytest.fixture(scope="session")
def release(before: Snapshot, docker_client: Any, repo_ws: Workspace, minishop: AppDescriptor) -> dict[str, ImageBuild]:
    """Every minishop service built once from the shipped source."""
    return {s: build_service(repo_ws, minishop, s, client=docker_client) for s in buildable(minishop)}


@pytest.fixture
def src_copy(tmp_path: Path, minishop: AppDescriptor) -> Path:
    """A copy of minishop's source folder to change."""
    assert minishop.source_dir is not None
    dest = tmp_path / "src"
    shutil.copytree(minishop.source_dir, dest, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
    return dest
