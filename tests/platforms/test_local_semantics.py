"""Config faults keep their in-cluster meaning on the local platform (DESIGN.md, "Platforms")."""

from __future__ import annotations

import re
import time

import psutil
import pytest
import requests

from faultkit.errors import InputError, PlatformError
from faultkit.platforms.local import LocalPlatform
from faultkit.workspace import Workspace
from tests.platforms.fixture_app import get, wait_for

pytestmark = pytest.mark.live


def _env(p: LocalPlatform, instance_id: str) -> dict[str, str]:
    pid = p.pids()[instance_id][0]
    return psutil.Process(pid).environ()


def test_wrong_dependency_port_is_refused(up: LocalPlatform) -> None:
    up.patch_field("front", "server", "env.BACK_ADDR", "http://back:9001/", timeout=10)
    code, body = get(up.endpoint("front") + "/")
    assert code == 502 and "Connection refused" in body
    [front] = up.instances("front")
    assert front.id == "front-1"  # the patch rolled the workload: a new instance
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", _env(up, "front-1")["BACK_ADDR"])


def test_unknown_host_fails_to_resolve(up: LocalPlatform) -> None:
    up.patch_field("front", "server", "env.BACK_ADDR", "http://bakc:9000/", timeout=10)
    assert _env(up, "front-1")["BACK_ADDR"] == "http://bakc.invalid:9000/"
    code, body = get(up.endpoint("front") + "/")
    assert code == 502 and re.search(r"Name or service not known|name resolution|Errno -[235]", body)


def test_patch_read_back_and_the_repo_manifest_is_untouched(up: LocalPlatform, workspace: Workspace) -> None:
    manifest = workspace.apps_dir / "fix/manifests/back.yaml"
    before = manifest.read_bytes()
    assert up.read_field("back", "server", "env.PORT") == "9000"
    assert up.read_field("Deployment/back", "server", "resources.limits.memory") == "128Mi"
    up.patch_field("back", "server", "env.GREETING", "hi", timeout=10)
    assert up.read_field("back", "server", "env.GREETING") == "hi"
    assert _env(up, "back-1")["GREETING"] == "hi"
    up.patch_field("back", "server", "env.GREETING", None, timeout=10)
    assert up.read_field("back", "server", "env.GREETING") is None
    assert manifest.read_bytes() == before
    with pytest.raises(InputError):
        up.read_field("back", "nope", "env.PORT")


def test_listener_port_disagreeing_with_the_service_refuses(up: LocalPlatform) -> None:
    """PORT no longer matches the containerPort: the probe fails, the rollout never gets ready."""
    with pytest.raises(PlatformError, match="did not become ready within 3s"):
        up.patch_field("back", "server", "env.PORT", "9100", timeout=3)
    assert up.read_field("back", "server", "env.PORT") == "9100"
    [back] = up.instances("back")
    assert back.id == "back-1" and not back.ready  # the new spec stays; no old replica serves
    code, _ = get(up.endpoint("front") + "/")
    assert code == 502
    up.patch_field("back", "server", "env.PORT", "9000", timeout=10)
    assert get(up.endpoint("front") + "/")[0] == 200


def test_service_port_patch_repoints_the_relay(up: LocalPlatform) -> None:
    assert up.read_field("Service/back", "", "ports.http.port") == "9000"
    up.patch_field("Service/back", "", "ports.http.port", "9001")
    assert up.read_field("Service/back", "", "ports.http.port") == "9001"
    code, body = get(up.endpoint("front") + "/")  # front still calls back:9000: refused now
    assert code == 502 and "Connection refused" in body
    up.patch_field("Service/back", "", "ports.http.port", "9000")
    assert get(up.endpoint("front") + "/")[0] == 200
    up.patch_field("Service/back", "", "ports.http.targetPort", "9100")
    assert get(up.endpoint("front") + "/")[0] == 502


def test_memory_limit_exceeded_is_an_oom_kill(up: LocalPlatform) -> None:
    with pytest.raises(PlatformError, match="did not become ready"):
        up.patch_field("back", "server", "env.ALLOC_MB", "400", timeout=4)
    wait_for(lambda: up.instances("back")[0].oom_kills >= 1, timeout=10)
    [back] = up.instances("back")
    assert back.last_exit == 137 and back.restarts >= 1 and not back.ready
    events = [r for r in up.logs("back", 0) if r.fields.get("event") == "oom_kill"]
    assert events and events[0].level == "ERROR"


def test_crash_is_restarted_with_back_off_and_counted(up: LocalPlatform) -> None:
    url = up.instance_endpoints("back")["back-0"]
    for n in (1, 2):
        get(url + "/crash", timeout=3)
        wait_for(lambda n=n: up.instances("back")[0].restarts == n, timeout=10)
        wait_for(lambda: up.ready("back"), timeout=15)
    [back] = up.instances("back")
    assert back.last_exit == 3 and back.oom_kills == 0
    exits = [r for r in up.logs("back", 0) if r.fields.get("event") == "exit"]
    assert [e.message.rsplit(" in ", 1)[1] for e in exits] == ["0.5s", "1.0s"]


def test_logs_are_filtered_by_time(up: LocalPlatform) -> None:
    t0 = time.time()
    assert [r.message for r in up.logs("back", 0, t0) if r.message == "starting"] == ["starting"]
    assert up.logs("back", t0) == []
    up.patch_field("front", "server", "env.BACK_ADDR", "http://back:9001/", timeout=10)
    requests.get(up.endpoint("front") + "/", timeout=10)
    # the supervisor reads a container's output on its own thread: the line lands a moment later
    wait_for(lambda: any(r.level == "ERROR" for r in up.logs("front", t0)), timeout=5)
    errors = [r for r in up.logs("front", t0) if r.level == "ERROR"]
    assert errors and errors[0].instance == "front-1" and "calling back failed" in errors[0].message
    assert all(t0 <= r.ts for r in up.logs("front", t0))
    assert up.logs("front", t0, t0 + 0.001) == []
