"""Config changes on the live objects: patched, read back, restored exactly (an absent field too)."""

from __future__ import annotations

import time

import pytest
import requests
from kubernetes import client

from faultkit.errors import InputError, NotReady
from faultkit.platforms.kubernetes import KubernetesPlatform
from faultkit.platforms.kubernetes.rollouts import wait_rollout
from tests.helpers.minishop_checkout import checkout
from tests.platforms.kubernetes.k8s_support import wait_until

pytestmark = [pytest.mark.live, pytest.mark.exclusive]


def _env(apps: client.AppsV1Api, ns: str, name: str) -> list[tuple[str, str]]:
    c = apps.read_namespaced_deployment(name, ns).spec.template.spec.containers[0]
    return [(e.name, e.value) for e in c.env or []]


def test_env_patched_read_back_and_restored(shop: KubernetesPlatform, apps_api: client.AppsV1Api) -> None:
    ns = shop.record().namespace
    before = _env(apps_api, ns, "checkout")
    old = shop.read_field("checkout", "checkout", "env.PAYMENT_ADDR")
    assert old == "payment:50051"
    shop.patch_field("checkout", "checkout", "env.PAYMENT_ADDR", "payment:50052", timeout=120)
    assert shop.read_field("Deployment/checkout", "checkout", "env.PAYMENT_ADDR") == "payment:50052"
    assert shop.ready("checkout")  # a wrong address still starts: readiness does not depend on it
    # a port payment's Service does not serve is refused, as on any cluster (once, this host's network
    # answered it with a 404 instead: tools/cluster/README.md), so checkouts fail with a 500
    wait_until(lambda: "[Errno 111] Connection refused" in (r := checkout(shop.endpoint("frontend"), "settings")).text
               and r.status_code == 500, 30, "a checkout refused by payment's Service")
    shop.patch_field("checkout", "checkout", "env.PAYMENT_ADDR", old, timeout=120)
    assert _env(apps_api, ns, "checkout") == before


def test_absent_field_added_then_removed(shop: KubernetesPlatform, apps_api: client.AppsV1Api) -> None:
    ns = shop.record().namespace
    before = apps_api.read_namespaced_deployment("email", ns).spec.template.spec.containers[0]
    assert shop.read_field("email", "email", "env.SMTP_TIMEOUT") is None
    assert shop.read_field("email", "email", "resources.limits.ephemeral-storage") is None
    shop.patch_field("email", "email", "env.SMTP_TIMEOUT", "3", timeout=120)
    shop.patch_field("email", "email", "resources.limits.ephemeral-storage", "64Mi", timeout=120)
    assert shop.read_field("email", "email", "env.SMTP_TIMEOUT") == "3"
    live = apps_api.read_namespaced_deployment("email", ns).spec.template.spec.containers[0]
    assert live.resources.limits["ephemeral-storage"] == "64Mi"
    shop.patch_field("email", "email", "env.SMTP_TIMEOUT", None, timeout=120)
    shop.patch_field("email", "email", "resources.limits.ephemeral-storage", None, timeout=120)
    after = apps_api.read_namespaced_deployment("email", ns).spec.template.spec.containers[0]
    assert after.to_dict() == before.to_dict()


def test_a_rollout_is_given_the_time_its_readiness_probe_waits(shop: KubernetesPlatform,
                                                              apps_api: client.AppsV1Api) -> None:
    """A readiness probe that first checks after N s (Bank of Anthos' JVM services: 60 s) holds every
    rollout that long: the rollout's time limit counts from then, so a change is not undone for a delay
    its own manifest demands (a 3 s limit here, against an 8 s delay)."""
    ns = shop.record().namespace
    before = apps_api.read_namespaced_deployment("email", ns).spec.template.spec.containers[0]
    delay = {"spec": {"template": {"spec": {"containers": [
        {"name": "email", "readinessProbe": {"initialDelaySeconds": 8}}]}}}}
    apps_api.patch_namespaced_deployment("email", ns, delay)
    try:
        assert wait_rollout(shop.conn, ns, "email", "email", None, 120).done
        started = time.monotonic()
        shop.patch_field("email", "email", "env.SMTP_TIMEOUT", "3", timeout=3)
        assert time.monotonic() - started >= 8 and shop.read_field("email", "email", "env.SMTP_TIMEOUT") == "3"
        shop.patch_field("email", "email", "env.SMTP_TIMEOUT", None, timeout=3)
    finally:
        apps_api.patch_namespaced_deployment("email", ns, [
            {"op": "remove", "path": "/spec/template/spec/containers/0/readinessProbe/initialDelaySeconds"}])
        assert wait_rollout(shop.conn, ns, "email", "email", None, 120).done
    after = apps_api.read_namespaced_deployment("email", ns).spec.template.spec.containers[0]
    assert after.to_dict() == before.to_dict()


def test_service_target_port(shop: KubernetesPlatform, core: client.CoreV1Api) -> None:
    ns = shop.record().namespace
    assert shop.read_field("Service/payment", "", "ports.http.targetPort") == "50051"
    url = shop.endpoint("payment") + "/healthz"
    assert requests.get(url, timeout=10).status_code == 200
    shop.patch_field("Service/payment", "", "ports.http.targetPort", "50059", timeout=60)
    assert core.read_namespaced_service("payment", ns).spec.ports[0].target_port == 50059
    assert shop.read_field("Service/payment", "", "ports.http.targetPort") == "50059"
    # faultkit's address of a service goes where the Service sends its port now, as a caller's would:
    # to 50059, where nothing listens, so no answer comes (the port-forward holds the connection open
    # until the client's timeout, as CI measured, or the connection is refused)
    with pytest.raises(requests.RequestException):
        requests.get(url, timeout=5)
    shop.patch_field("Service/payment", "", "ports.http.targetPort", "50051", timeout=60)
    assert core.read_namespaced_service("payment", ns).spec.ports[0].target_port == 50051
    assert requests.get(url, timeout=10).status_code == 200


def test_a_setting_that_never_gets_ready_is_reported_and_no_old_replica_serves(
        shop: KubernetesPlatform, apps_api: client.AppsV1Api) -> None:
    ns = shop.record().namespace
    old = shop.read_field("shipping", "shipping", "readinessProbe.httpGet.path")
    assert old == "/readyz"
    try:
        with pytest.raises(NotReady, match="did not become ready"):
            shop.patch_field("shipping", "shipping", "readinessProbe.httpGet.path", "/nowhere", timeout=20)
        assert not shop.ready("shipping")
        rs = apps_api.list_namespaced_replica_set(ns, label_selector="app=shipping").items
        assert sum(r.status.ready_replicas or 0 for r in rs) == 0, "an old replica still serves"
    finally:
        # restored whatever happened: the app is shared by the module's later tests and others
        shop.patch_field("shipping", "shipping", "readinessProbe.httpGet.path", old, timeout=120)
    assert shop.ready("shipping")


def test_unknown_container_is_a_clear_error(shop: KubernetesPlatform) -> None:
    with pytest.raises(InputError, match="has no container 'nope'"):
        shop.read_field("checkout", "nope", "env.X")
