"""Instances, restarts, OOM kills, logs (the previous container's too) and metrics, on live pods."""

from __future__ import annotations

import time

import pytest
import requests
from kubernetes import client
from kubernetes.stream import stream

from faultkit.errors import NotReady
from faultkit.platforms.kubernetes import KubernetesPlatform
from tests.platforms.kubernetes.k8s_support import wait_until

pytestmark = [pytest.mark.live, pytest.mark.exclusive]


def _pod(shop: KubernetesPlatform, service: str) -> str:
    slots = shop._slot_pods(service)
    return str(slots[f"{service}-0"]["metadata"]["name"])


def test_metrics_through_the_pod_proxy_count_probe_requests(shop: KubernetesPlatform) -> None:
    base = shop.endpoint("currency")
    before = shop.request_counts("currency")
    assert list(before) == ["currency-0"] and before["currency-0"] is not None
    for _ in range(3):
        assert requests.get(base + "/currencies", timeout=10).status_code == 200
    after = shop.request_counts("currency")["currency-0"]
    assert after is not None
    assert after.get("200", 0) - (before["currency-0"] or {}).get("200", 0) >= 3


def test_container_restart_is_counted_and_its_last_words_read(shop: KubernetesPlatform,
                                                             core: client.CoreV1Api) -> None:
    ns = shop.record().namespace
    [inst] = shop.instances("recommendation")
    since = time.time() - 1
    pod = _pod(shop, "recommendation")
    # SIGTERM to the service (pid 1): it stops gracefully with status 0 and the kubelet restarts it in place
    stream(core.connect_get_namespaced_pod_exec, pod, ns, command=["sh", "-c", "kill 1"],
           stderr=True, stdout=True, stdin=False, tty=False)
    after = wait_until(lambda: [i for i in shop.instances("recommendation") if i.restarts == inst.restarts + 1
                                and i.ready], 90, "recommendation restarted and ready")[0]
    assert after.id == inst.id and after.last_exit == 0
    logs = shop.logs("recommendation", since)
    assert logs and all(r.instance == "recommendation-0" for r in logs)
    # the lines of the stopped container (its shutdown) are read through previous=true
    previous = core.read_namespaced_pod_log(pod, ns, previous=True, timestamps=True)
    last_previous = previous.strip().splitlines()[-1].split(" ", 1)[1]
    assert any(r.message in last_previous for r in logs), (last_previous, [r.message for r in logs][-5:])


def test_a_replaced_pod_counts_a_restart_of_the_same_instance(shop: KubernetesPlatform,
                                                               core: client.CoreV1Api) -> None:
    [inst] = shop.instances("email")
    old_pod = _pod(shop, "email")
    # deleted at once from outside (an eviction, a node drain): its ReplicaSet replaces it
    core.delete_namespaced_pod(old_pod, shop.record().namespace, body=client.V1DeleteOptions(grace_period_seconds=0))
    after = wait_until(lambda: [i for i in shop.instances("email") if i.ready and _pod(shop, "email") != old_pod],
                       120, "email's pod replaced and ready")[0]
    assert after.id == "email-0"
    assert after.restarts == inst.restarts + 1


def test_oom_kill_is_reported(shop: KubernetesPlatform) -> None:
    old = shop.read_field("cartstore", "cartstore", "resources.limits.memory")
    old_request = shop.read_field("cartstore", "cartstore", "resources.requests.memory")
    # the API server refuses a limit below the request (HTTP 422), so the request goes down first
    shop.patch_field("cartstore", "cartstore", "resources.requests.memory", "12Mi", timeout=120)
    try:
        with pytest.raises(NotReady):  # python alone needs more: the container is killed at each start
            shop.patch_field("cartstore", "cartstore", "resources.limits.memory", "12Mi", timeout=30)
        oom = wait_until(lambda: [i for i in shop.instances("cartstore") if i.oom_kills >= 1], 120,
                         "an OOM kill of cartstore")[0]
        assert oom.last_exit == 137
    finally:
        shop.patch_field("cartstore", "cartstore", "resources.limits.memory", old, timeout=120)
        shop.patch_field("cartstore", "cartstore", "resources.requests.memory", old_request, timeout=120)
    assert shop.ready("cartstore")
