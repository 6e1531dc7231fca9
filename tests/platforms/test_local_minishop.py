"""The real reference app on the local platform: every service ready, the shop answers."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
import requests

from faultkit.platforms.local import LocalPlatform
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.skipif(
    not (REPO / "apps/minishop/app.yaml").is_file() or not (REPO / "apps/minishop/manifests").is_dir(),
    reason="apps/minishop is not in this checkout",
), pytest.mark.live]


def test_minishop_comes_up_and_serves(tmp_path: Path) -> None:
    p = LocalPlatform(Workspace(root=REPO, state_dir=tmp_path / "state"))
    try:
        p.up("minishop", replicas=0, timeout=90)
        insts = p.instances()
        services = {i.service for i in insts}
        assert {"frontend", "cart", "cartstore", "checkout", "loadgenerator"} <= services
        assert all(i.ready for i in insts), [i for i in insts if not i.ready]
        r = requests.get(p.endpoint("frontend") + "/", timeout=10)
        assert r.status_code == 200
        assert p.read_field("cart", "cart", "env.CARTSTORE_ADDR") == "cartstore:6379"
        pids = [pid for ps in p.pids().values() for pid in ps]
    finally:
        p.down()
    assert not any(psutil.pid_exists(pid) for pid in pids)
