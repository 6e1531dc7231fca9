"""Rollouts replace every replica; a rollout that never gets ready is rolled back."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from faultkit.errors import PlatformError
from faultkit.platforms.local import LocalPlatform
from faultkit.workspace import Workspace
from tests.platforms.fixture_app import get, wait_for, write_app

pytestmark = pytest.mark.live


@pytest.fixture
def up2(tmp_path: Path) -> Iterator[LocalPlatform]:
    root = tmp_path / "repo2"
    write_app(root, back_replicas=2)
    p = LocalPlatform(Workspace(root=root, state_dir=tmp_path / "state2"))
    p.up("fix", replicas=0, timeout=30)
    yield p
    p.down()


def _patched_src(p: LocalPlatform, tmp_path: Path, old: str, new: str) -> str:
    src = p.workspace.apps_dir / "fix/src"
    copy = tmp_path / "patched-src"
    shutil.copytree(src, copy)
    main = copy / "back/main.py"
    main.write_text(main.read_text().replace(old, new))
    return str(copy)


def test_rollout_replaces_every_replica(up2: LocalPlatform, tmp_path: Path) -> None:
    old = up2.instances("back")
    assert len(old) == 2
    old_pids = [pid for i in old for pid in up2.pids("back")[i.id]]
    new_build = up2.build("back", _patched_src(up2, tmp_path, 'VERSION = "v1"', 'VERSION = "v2"'))
    assert up2.build_contains(new_build.id, 'VERSION = "v2"')
    assert [b.id for b in up2.builds("back")][-1] == new_build.id
    up2.rollout("back", new_build.id, timeout=20)
    new = up2.instances("back")
    assert sorted(i.id for i in new) == ["back-2", "back-3"]
    assert all(i.build == new_build.id and i.ready for i in new)
    assert not any(psutil.pid_exists(pid) for pid in old_pids)
    bodies = {get(up2.endpoint("front") + "/")[1].split(" ")[3] for _ in range(6)}
    assert bodies == {"v2"}


def test_rollout_that_never_gets_ready_rolls_back(up: LocalPlatform, tmp_path: Path) -> None:
    before = up.instances("back")[0]
    broken = up.build("back", _patched_src(up, tmp_path, "NAME = ", "raise SystemExit(4)\nNAME = "))
    with pytest.raises(PlatformError, match="did not become ready within 3s; rolled back to build"):
        up.rollout("back", broken.id, timeout=3)
    [after] = up.instances("back")
    assert after.id == before.id and after.build == before.build and after.ready
    assert get(up.endpoint("front") + "/")[0] == 200
    wait_for(lambda: up.logs("back", 0), timeout=5)
    with pytest.raises(PlatformError, match="not known"):
        up.rollout("back", "sha256:" + "ab" * 32)
