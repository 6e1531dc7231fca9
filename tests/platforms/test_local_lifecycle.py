"""up / status / down on real processes: nothing is left behind, one supervisor at a time."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import psutil
import pytest

from faultkit.errors import PlatformError
from faultkit.platforms.base import Platform
from faultkit.platforms.local import LocalPlatform, local_platform
from faultkit.workspace import Workspace
from tests.platforms.fixture_app import get, wait_for

pytestmark = pytest.mark.live


def _all_pids(p: LocalPlatform) -> list[int]:
    return [pid for pids in p.pids().values() for pid in pids]


def test_up_serves_through_relays_and_down_leaves_nothing(up: LocalPlatform, workspace: Workspace) -> None:
    assert isinstance(up, Platform) and up.name == "local"
    assert up.is_up() and up.app() == "fix"
    insts = up.instances()
    assert sorted(i.id for i in insts) == ["back-0", "front-0"]
    assert all(i.ready and i.restarts == 0 and i.build.startswith("sha256:") for i in insts)
    assert up.ready("front") and up.ready("back")
    code, body = get(up.endpoint("front") + "/")
    assert code == 200 and body.startswith("front -> back v1")
    urls = up.instance_endpoints("back")
    assert list(urls) == ["back-0"] and get(urls["back-0"] + "/readyz")[0] == 200
    info = up.state.read_info()
    assert info is not None
    pids = _all_pids(up) + [int(info["pid"])]
    up.down()
    assert not up.is_up()
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie" for pid in pids)
    assert not (workspace.state_dir / "local/supervisor.json").exists()
    up.down()  # nothing up: a no-op


def test_second_up_is_refused(up: LocalPlatform, workspace: Workspace) -> None:
    other = local_platform(workspace)
    with pytest.raises(PlatformError, match=r"fix is already up on the local platform \(supervisor pid \d+\)"):
        other.up("fix")
    assert up.ready("front")


def test_supervisor_killed_takes_its_children_along(up: LocalPlatform) -> None:
    info = up.state.read_info()
    assert info is not None
    pids = _all_pids(up)
    assert len(pids) == 2
    os.kill(int(info["pid"]), signal.SIGKILL)
    wait_for(lambda: not any(psutil.pid_exists(p) for p in pids), timeout=10)
    assert not up.is_up()


def test_supervisor_sigterm_stops_everything_cleanly(up: LocalPlatform) -> None:
    info = up.state.read_info()
    assert info is not None
    pids = _all_pids(up)
    sup = psutil.Process(int(info["pid"]))
    sup.send_signal(signal.SIGTERM)
    sup.wait(timeout=20)  # reaps it too: the test process started it
    assert not any(psutil.pid_exists(p) for p in pids)
    assert not up.state.info_path.exists()


def test_up_reports_a_service_that_never_gets_ready(workspace: Workspace) -> None:
    manifest = workspace.apps_dir / "fix/manifests/back.yaml"
    manifest.write_text(manifest.read_text().replace("path: /readyz", "path: /nope"))
    p = LocalPlatform(workspace)
    started = time.time()
    with pytest.raises(PlatformError, match=r"back did not become ready within 4s; last lines of back's log:"):
        p.up("fix", replicas=0, timeout=4)
    assert time.time() - started < 30
    assert not p.is_up()
    from faultkit.platforms.local.processes import recorded_alive

    assert recorded_alive(p.state.pids) == []


def test_up_reports_a_host_port_in_use(workspace: Workspace) -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    manifest = workspace.apps_dir / "fix/manifests/back.yaml"
    text = manifest.read_text()
    manifest.write_text(text.replace("containerPort: 9000}", f"containerPort: 9000, hostPort: {port}}}"))
    p = LocalPlatform(workspace)
    try:
        with pytest.raises(PlatformError, match=f"port {port} .* already in use"):
            p.up("fix", replicas=0, timeout=10)
        assert not p.is_up()
    finally:
        busy.close()
        p.down()


def test_unknown_app_is_an_input_error(workspace: Workspace, tmp_path: Path) -> None:
    from faultkit.errors import InputError

    with pytest.raises(InputError, match="not an application"):
        LocalPlatform(workspace).up("nope")
