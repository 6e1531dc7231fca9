"""The same assertions against every platform: what the validator relies on, platform by platform."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import requests

from faultkit.errors import Unsupported, UsageError
from faultkit.platforms.base import Platform


def _wait(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}", pytrace=False)
        time.sleep(0.5)
    return value


def test_up_every_service_ready_with_stable_instance_ids(platform: Platform) -> None:
    assert platform.is_up() and platform.app() == "minishop"
    insts = platform.instances()
    assert insts and all(i.ready for i in insts), [i for i in insts if not i.ready]
    for i in insts:
        assert i.id == f"{i.service}-{i.id.rsplit('-', 1)[1]}" and i.id.rsplit("-", 1)[1].isdigit()
        assert i.build.startswith("sha256:"), i.build
    assert platform.target()["platform"] == platform.name


def test_request_counts_per_instance(platform: Platform) -> None:
    base = platform.endpoint("currency")
    before = platform.request_counts("currency")
    assert set(before) == {i.id for i in platform.instances("currency")}
    for _ in range(2):
        assert requests.get(base + "/currencies", timeout=10).status_code == 200
    after = platform.request_counts("currency")
    iid = sorted(after)[0]
    assert after[iid] is not None and sum(after[iid].values()) >= sum((before[iid] or {}).values()) + 2


def test_a_setting_round_trips_and_an_absent_one_is_removed(platform: Platform) -> None:
    assert platform.read_field("checkout", "checkout", "env.PAYMENT_ADDR") == "payment:50051"
    platform.patch_field("checkout", "checkout", "env.PAYMENT_ADDR", "payment:50052", timeout=120)
    assert platform.read_field("checkout", "checkout", "env.PAYMENT_ADDR") == "payment:50052"
    platform.patch_field("checkout", "checkout", "env.PAYMENT_ADDR", "payment:50051", timeout=120)
    assert platform.read_field("checkout", "checkout", "env.PAYMENT_ADDR") == "payment:50051"
    assert platform.read_field("email", "email", "env.EXTRA") is None
    platform.patch_field("email", "email", "env.EXTRA", "1", timeout=120)
    platform.patch_field("email", "email", "env.EXTRA", None, timeout=120)
    assert platform.read_field("email", "email", "env.EXTRA") is None
    assert platform.ready("checkout") and platform.ready("email")


def test_logs_name_the_instances(platform: Platform) -> None:
    since = time.time() - 120
    ids = {i.id for i in platform.instances("frontend")}
    logs = _wait(lambda: platform.logs("frontend", since), 30, "frontend's log lines")
    assert {r.instance for r in logs} <= ids and all(r.service == "frontend" for r in logs)


def test_signal_sources_say_where_requests_and_logs_are_read(platform: Platform) -> None:
    """What a rules v5 window records beside its figures: a kind and a metric for requests, a source
    and a format for logs (minishop declares no log format: its JSON lines)."""
    sources = platform.signal_sources()
    assert set(sources) == {"requests", "logs"}
    assert sources["requests"]["kind"] and sources["requests"]["metric"]
    assert sources["logs"]["source"] and sources["logs"]["format"] == "json"


def test_a_query_service_is_reached_by_its_url_or_by_its_service_where_there_is_a_cluster(platform: Platform) -> None:
    """What validate reads Jaeger and Prometheus through: an http(s) URL as given; a Service's
    k8s:// URL forwarded to on the platform with a cluster, refused in one line on the others."""
    assert platform.query_address("http://127.0.0.1:9090", "--alerts") == "http://127.0.0.1:9090"
    with pytest.raises(UsageError, match=r"^--alerts k8s://telemetry: expected k8s://NAMESPACE/SERVICE:PORT$"):
        platform.query_address("k8s://telemetry", "--alerts")
    namespace = platform.target().get("namespace")
    if namespace is None:  # no cluster
        with pytest.raises(UsageError, match=r"^--alerts 'k8s://telemetry/prometheus:9090': names a Service in a "
                                             f"cluster, which the {platform.name} platform cannot reach"):
            platform.query_address("k8s://telemetry/prometheus:9090", "--alerts")
        return
    url = platform.query_address(f"k8s://{namespace}/frontend:8080", "--alerts")
    assert url.startswith("http://127.0.0.1:")
    assert _wait(lambda: requests.get(f"{url}/healthz", timeout=5).status_code == 200, 30, "the frontend's Service")


def test_instance_kill_restarts_the_same_instance(platform: Platform) -> None:
    [before] = platform.instances("shipping")
    handle = platform.start_action("instance-kill", "shipping", {}, "one")
    try:
        after = _wait(lambda: [i for i in platform.instances("shipping") if i.ready and i.restarts > before.restarts],
                      120, "shipping restarted and ready")
    finally:
        platform.stop_action(handle)
    assert after[0].id == before.id and after[0].restarts == before.restarts + 1
    assert platform.action_leftovers(handle) == [] and handle not in platform.active_actions()


SIX = {"instance-kill", "instance-failure", "cpu-stress", "memory-stress", "network-delay", "network-loss"}


@pytest.mark.parametrize("action, params", [("cpu-stress", {"workers": 1}), ("network-delay", {"ms": 50}),
                                            ("instance-failure", {})])
def test_an_action_is_in_force_under_its_handle_until_stopped(platform: Platform, action: str,
                                                              params: dict[str, object]) -> None:
    assert SIX <= platform.actions()
    handle = platform.start_action(action, "email", params, "all")
    try:
        assert handle in platform.active_actions()
    finally:
        platform.stop_action(handle)
    assert handle not in platform.active_actions()
    _wait(lambda: platform.ready("email"), 60, "email ready after the action stopped")


def test_an_action_the_platform_cannot_carry_out_is_refused(platform: Platform) -> None:
    with pytest.raises(Unsupported, match="dns-error"):
        platform.start_action("dns-error", "email", {})
    assert platform.active_actions() == []
