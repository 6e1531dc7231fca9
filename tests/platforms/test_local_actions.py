"""Direct actions on real processes: kill, failure, stress, network delay and loss."""

from __future__ import annotations

import time

import psutil
import pytest

from faultkit.errors import Unsupported
from faultkit.platforms.local import LocalPlatform
from tests.platforms.fixture_app import get, wait_for

pytestmark = pytest.mark.live


def _latency(url: str, n: int = 3) -> float:
    started = time.time()
    for _ in range(n):
        assert get(url)[0] == 200
    return (time.time() - started) / n


def test_network_delay_adds_latency(up: LocalPlatform) -> None:
    url = up.endpoint("front") + "/"
    base = _latency(url)
    handle = up.start_action("network-delay", "back", {"ms": 300})
    delayed = _latency(url)
    up.stop_action(handle)
    assert delayed - base >= 0.28
    assert _latency(url) < base + 0.15


def test_network_loss_drops_connections(up: LocalPlatform) -> None:
    url = up.endpoint("front") + "/"
    handle = up.start_action("network-loss", "back", {"percent": 100})
    assert [get(url)[0] for _ in range(3)] == [502, 502, 502]
    up.stop_action(handle)
    assert get(url)[0] == 200


def test_instance_failure_and_recovery(up: LocalPlatform) -> None:
    url = up.endpoint("front") + "/"
    handle = up.start_action("instance-failure", "back", {})
    pid = up.pids("back")["back-0"][0]
    assert psutil.Process(pid).status() == psutil.STATUS_STOPPED
    wait_for(lambda: not up.ready("back"), timeout=15)
    assert get(url)[0] == 502
    up.stop_action(handle)
    wait_for(lambda: up.ready("back"), timeout=10)
    assert get(url)[0] == 200
    assert up.instances("back")[0].restarts == 0  # suspended, not restarted


def test_instance_kill_restarts(up: LocalPlatform) -> None:
    handle = up.start_action("instance-kill", "back", {})
    wait_for(lambda: up.instances("back")[0].restarts == 1, timeout=10)
    assert up.instances("back")[0].last_exit == 137
    up.stop_action(handle)
    wait_for(lambda: up.ready("back"), timeout=10)
    handle = up.start_action("instance-kill", "back", {"instance": "back-0"})
    wait_for(lambda: up.instances("back")[0].restarts == 2, timeout=10)
    up.stop_action(handle)
    wait_for(lambda: up.ready("back"), timeout=10)


def test_memory_stress_counts_against_the_limit(up: LocalPlatform) -> None:
    handle = up.start_action("memory-stress", "back", {"mb": 300})  # limit 128Mi
    wait_for(lambda: up.instances("back")[0].oom_kills == 1, timeout=15)
    assert up.instances("back")[0].last_exit == 137
    up.stop_action(handle)
    wait_for(lambda: up.ready("back"), timeout=10)


def test_cpu_stress_attaches_busy_helpers(up: LocalPlatform) -> None:
    handle = up.start_action("cpu-stress", "back", {"workers": 2})
    pids = up.pids("back")["back-0"]
    assert len(pids) == 3
    helpers = [psutil.Process(p) for p in pids[1:]]
    before = sum(sum(h.cpu_times()[:2]) for h in helpers)
    time.sleep(1.0)
    burnt = sum(sum(h.cpu_times()[:2]) for h in helpers) - before
    assert burnt > 0.2  # busy loops (bounded low: the machine may be shared with other work)
    up.stop_action(handle)
    assert not any(psutil.pid_exists(h.pid) for h in helpers)
    assert len(up.pids("back")["back-0"]) == 1


def test_cpu_limit_is_a_quota_that_stress_competes_within(up: LocalPlatform) -> None:
    enforced = up.supervisor_status()["cpu_limits"]
    if not enforced.startswith("enforced"):
        pytest.skip(f"this machine gives the supervisor no cgroup to throttle with ({enforced})")
    up.patch_field("back", "server", "resources.limits.cpu", "100m", timeout=10)
    handle = up.start_action("cpu-stress", "back", {"workers": 2})
    helpers = [psutil.Process(p) for p in up.pids("back")["back-1"][1:]]
    before = sum(sum(h.cpu_times()[:2]) for h in helpers)
    time.sleep(2.0)
    burnt = sum(sum(h.cpu_times()[:2]) for h in helpers) - before
    assert burnt < 0.35  # two busy loops held to 100m together: 0.2 s of CPU in 2 s, not 2+ s
    up.stop_action(handle)
    up.patch_field("back", "server", "resources.limits.cpu", None, timeout=10)
    assert get(up.endpoint("front") + "/")[0] == 200


def test_other_actions_are_refused_naming_kubernetes(platform: LocalPlatform) -> None:
    for action in ("dns-error", "disk-fill", "io-delay", "node-restart"):
        assert action not in platform.actions()
        with pytest.raises(Unsupported, match="use the kubernetes platform"):
            platform.start_action(action, "back", {})
