"""Parts of the kubernetes platform that need no cluster: rendering, the pod ledger, log lines, pods by workload."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.errors import InputError
from faultkit.platforms.kubernetes import apply, objects
from faultkit.platforms.kubernetes.instances import Ledger
from faultkit.platforms.kubernetes.logs import parse_k8s_line
from faultkit.platforms.service_url import parse_service_url
from faultkit.workspace import Workspace
from tests.platforms.kubernetes.k8s_support import REPO


def test_render_puts_every_object_in_the_namespace_with_the_built_images() -> None:
    ws = Workspace(REPO, REPO / ".faultkit")
    objs = apply.render(load_app(ws, "minishop"), "fk-x", {"cart": "minishop/cart:1.0.0-0123456789ab"}, REPO)
    assert {o["metadata"]["namespace"] for o in objs} == {"fk-x"}
    [cart] = [o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == "cart"]
    container = cart["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "minishop/cart:1.0.0-0123456789ab"
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert "faultkit" not in apply.field_manager("minishop")  # managedFields are readable by the agent


def test_render_with_an_otlp_endpoint_points_every_container_there_and_names_no_tool() -> None:
    ws = Workspace(REPO, REPO / ".faultkit")
    plain = apply.render(load_app(ws, "minishop"), "fk-x", {}, REPO)
    objs = apply.render(load_app(ws, "minishop"), "fk-x", {}, REPO, otlp_endpoint="http://collector.obs.svc:4318")
    containers = [c for o in objs if o["kind"] == "Deployment" for c in o["spec"]["template"]["spec"]["containers"]]
    assert containers and len(objs) == len(plain)
    for c in containers:
        env = {e["name"]: e for e in c["env"]}
        assert env["OTEL_EXPORTER_OTLP_ENDPOINT"]["value"] == "http://collector.obs.svc:4318"
        assert env["OTEL_METRIC_EXPORT_INTERVAL"]["value"] == "1000"
        pod = env["OTEL_RESOURCE_ATTRIBUTES_POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"]
        assert pod == "metadata.name"
        # defined before the variable that refers to it, as Kubernetes expands $(NAME) only then
        names = [e["name"] for e in c["env"]]
        assert names.index("OTEL_RESOURCE_ATTRIBUTES_POD_NAME") < names.index("OTEL_RESOURCE_ATTRIBUTES")
        assert env["OTEL_RESOURCE_ATTRIBUTES"]["value"] == (
            "k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),k8s.namespace.name=fk-x")
        assert "faultkit" not in str(c["env"]).lower()  # the agent reads every pod's env
    # a value the manifest sets itself is kept
    [checkout] = [o for o in plain if o["kind"] == "Deployment" and o["metadata"]["name"] == "checkout"]
    checkout["spec"]["template"]["spec"]["containers"][0].setdefault("env", []).append(
        {"name": "OTEL_METRIC_EXPORT_INTERVAL", "value": "5000"})
    apply._add_env(checkout["spec"]["template"]["spec"]["containers"][0], apply.telemetry_env("http://c:4318", "x"))
    env = checkout["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["value"] for e in env if e["name"] == "OTEL_METRIC_EXPORT_INTERVAL"] == ["5000"]


@pytest.mark.parametrize(("text", "parts"), [
    ("k8s://telemetry/prometheus:9090", ("telemetry", "prometheus", 9090)),
    ("k8s://monitoring/kube-prometheus-stack-prometheus:9090/", ("monitoring", "kube-prometheus-stack-prometheus",
                                                                 9090)),
    ("http://127.0.0.1:9090", None),
])
def test_a_prometheus_in_the_cluster_is_named_by_namespace_service_and_port(text: str, parts: object) -> None:
    assert parse_service_url(text) == parts


@pytest.mark.parametrize("text", ["k8s://prometheus:9090", "k8s://ns/prometheus", "k8s://ns/a/b:1",
                                  "k8s://ns/prometheus:0", "k8s://ns/prometheus:http"])
def test_a_malformed_cluster_url_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="expected k8s://NAMESPACE/SERVICE:PORT"):
        parse_service_url(text)


def test_render_refuses_a_giveaway_word() -> None:
    ws = Workspace(REPO, REPO / ".faultkit")
    with pytest.raises(InputError, match="gives the fault away"):
        apply.render(load_app(ws, "minishop"), "fk-x", {"cart": "minishop/cart:chaos-1"}, REPO)


def pod(uid: str, created: str, restarts: int = 0, last: dict[str, Any] | None = None,
        image: str = "sha256:aa") -> dict[str, Any]:
    status = {"name": "cart", "restartCount": restarts, "imageID": f"docker.io/minishop/cart@{image}",
              "lastState": {"terminated": last} if last else {}}
    return {"metadata": {"uid": uid, "name": f"cart-{uid}", "creationTimestamp": created},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "containerStatuses": [status]}}


def test_ledger_counts_replaced_pods_and_ooms_but_not_rollouts(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "pods.json")
    builds = {"sha256:aa": "sha256:build-a", "sha256:bb": "sha256:build-b"}.get

    def see(*pods: dict[str, Any]) -> list[Any]:
        return ledger.observe("cart", list(pods), "cart", lambda d, _ref: builds(d) or d)
    [a] = see(pod("1", "t1"))
    assert (a.id, a.restarts, a.build, a.ready) == ("cart-0", 0, "sha256:build-a", True)
    [b] = see(pod("2", "t2"))  # pod 1 vanished: it was replaced (a kill, an eviction)
    assert (b.id, b.restarts) == ("cart-0", 1)
    oom = {"reason": "OOMKilled", "exitCode": 137}
    [c] = see(pod("2", "t2", restarts=1, last=oom))
    assert (c.restarts, c.oom_kills, c.last_exit) == (2, 1, 137)
    [c] = see(pod("2", "t2", restarts=1, last=oom))
    assert c.oom_kills == 1  # the same termination seen twice is one kill
    ledger.retire("cart", ["2"])  # a rollout faultkit makes replaces pod 2
    [d] = see(pod("3", "t3", image="sha256:bb"))
    assert (d.id, d.restarts, d.oom_kills, d.build) == ("cart-0", 1, 1, "sha256:build-b")
    assert ledger.pod_of("cart", "cart-0") == "3"


def test_pod_log_lines_parse_like_local_ones() -> None:
    rec = parse_k8s_line('2026-12-01T08:30:00.123456789Z {"level": "error", "message": "boom", "code": 7}',
                         "cart", "cart-0")
    assert rec is not None
    assert (rec.level, rec.message, rec.fields, rec.instance) == ("ERROR", "boom", {"code": 7}, "cart-0")
    assert abs(rec.ts - 1796113800.123456) < 1e-3
    plain = parse_k8s_line("2026-12-01T08:30:01Z Traceback (most recent call last):", "cart", "cart-0")
    assert plain is not None and plain.level == "ERROR"


def test_request_source_names_the_query_or_the_pod_proxy():
    from faultkit.apps.signals import RequestSignal
    from faultkit.platforms.kubernetes.metrics import request_source

    signal = RequestSignal()
    assert request_source("", "shop", signal) == {"kind": "pod-proxy", "signal": "exposition", "endpoint": "/metrics",
                                                  "metric": "http_server_request_duration_seconds_count"}
    promql = request_source("http://prometheus.example:9090", "shop", signal)
    assert promql["kind"] == "promql" and promql["endpoint"] == "http://prometheus.example:9090"
    assert promql["query"] == signal.promql("shop", ["<the service's pods>"])
    assert str(promql["query"]).startswith(
        'sum by (pod, http_response_status_code) (http_server_request_duration_seconds_count{namespace="shop"')
    # the probe's requests are in these counts unless the app marks them: then PromQL leaves them out
    assert promql["probe_counted"] is True
    marked = RequestSignal(probe_marked=True)
    assert request_source("http://prometheus.example:9090", "shop", marked)["probe_counted"] is False
    assert "probe_counted" not in request_source("", "shop", marked)  # a pod's /metrics counts them all


class _Lists:
    """The list calls `pods_of_workloads` makes, answering as the API server does (raw JSON)."""

    def __init__(self, deployments: list[dict[str, Any]], pods: list[dict[str, Any]],
                 statefulsets: list[dict[str, Any]] | None = None) -> None:
        self.apps, self.core, self.deployments, self.pods = self, self, deployments, pods
        self.statefulsets = statefulsets or []
        self.listed: list[str] = []

    def list_namespaced_deployment(self, namespace: str, _preload_content: bool = True) -> Any:
        self.listed.append("Deployment")
        return SimpleNamespace(data=json.dumps({"items": self.deployments}))

    def list_namespaced_stateful_set(self, namespace: str, _preload_content: bool = True) -> Any:
        self.listed.append("StatefulSet")
        return SimpleNamespace(data=json.dumps({"items": self.statefulsets}))

    def list_namespaced_pod(self, namespace: str, _preload_content: bool = True) -> Any:
        return SimpleNamespace(data=json.dumps({"items": self.pods or None}))  # none: `items: null`


def _dep(name: str, match: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": match}}}


def _pod(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


def test_pods_of_workloads_matches_each_deployments_selector_from_two_lists() -> None:
    lists = _Lists([_dep("cart", {"app": "cart"}), _dep("cart-v2", {"app": "cart", "version": "v2"})],
                   [_pod("cart-a", {"app": "cart", "version": "v1"}), _pod("cart-b", {"app": "cart", "version": "v2"}),
                    _pod("other", {"app": "payment"}), _pod("bare", {})])
    found = objects.pods_of_workloads(lists, "ns", {"cart": ("Deployment", "cart"),  # type: ignore[arg-type]
                                                    "cart2": ("Deployment", "cart-v2")})
    assert {s: [p["metadata"]["name"] for p in pods] for s, pods in found.items()} == {
        "cart": ["cart-a", "cart-b"], "cart2": ["cart-b"]}
    assert lists.listed == ["Deployment"]  # only the kinds asked for are listed
    assert objects.pods_of_workloads(_Lists([_dep("cart", {"app": "cart"})], []), "ns",  # type: ignore[arg-type]
                                     {"cart": ("Deployment", "cart")}) == {"cart": []}
    with pytest.raises(InputError, match="no Deployment named 'email' in namespace ns"):
        objects.pods_of_workloads(lists, "ns", {"email": ("Deployment", "email")})  # type: ignore[arg-type]


def test_pods_of_workloads_finds_a_statefulsets_pods_beside_a_deployments() -> None:
    # Bank of Anthos' databases are StatefulSets: a name in another kind is not the one asked for
    lists = _Lists([_dep("frontend", {"app": "frontend"})], [_pod("ledger-db-0", {"app": "ledger-db"}),
                                                            _pod("frontend-x", {"app": "frontend"})],
                   statefulsets=[_dep("ledger-db", {"app": "ledger-db"})])
    found = objects.pods_of_workloads(lists, "ns", {"frontend": ("Deployment", "frontend"),  # type: ignore[arg-type]
                                                    "ledger-db": ("StatefulSet", "ledger-db")})
    assert {s: [p["metadata"]["name"] for p in pods] for s, pods in found.items()} == {
        "frontend": ["frontend-x"], "ledger-db": ["ledger-db-0"]}
    with pytest.raises(InputError, match="no StatefulSet named 'frontend' in namespace ns"):
        objects.pods_of_workloads(lists, "ns", {"frontend": ("StatefulSet", "frontend")})  # type: ignore[arg-type]


def test_a_pods_pushed_series_missing_from_one_answer_is_no_answer_not_a_reset() -> None:
    """Measured on Bank of Anthos: the frontend's series were absent from one PromQL answer in a
    before window, and read as {} (a reset) the next sample counted its whole history, 5,094
    requests a minute, as the window's traffic; read as no answer, the window counts what it saw."""
    from faultkit.platforms.kubernetes.metrics import vanished_as_unanswered
    from faultkit.validators.screening import counter_delta

    counted: set[str] = set()
    answers = [{"web-1": {"200": 3144.0}}, {"web-1": {"200": 3183.0}}, {"web-1": {}, "web-2": {}},
               {"web-1": {"200": 3213.0}, "web-2": {}}]
    read = [vanished_as_unanswered(a, counted) for a in answers]
    assert read[2] == {"web-1": None, "web-2": {}}  # web-2 never counted yet: nothing, as before
    window = {"samples": [{"instances": {"web-1": {"service": "web", "requests": r["web-1"]}}} for r in read]}
    assert counter_delta(window, "web", "ok") == 3213.0 - 3144.0
    assert counted == {"web-1"}
