"""The telemetry stack on the cluster (issue 30), live: `tools/telemetry/telemetry cluster up` runs
Jaeger and Prometheus in namespace telemetry from images made here, and minishop, brought
up with --otlp-endpoint, exports to it.

- a checkout through the frontend is one trace in the stack's Jaeger, spanning frontend, checkout
  and payment, read through the API server as faultkit reads it;
- request counts read through the stack's Prometheus (--prometheus k8s://...) agree with each pod's
  own /metrics, and its server errors arrive there;
- the symptom probe's requests reach no span and no series of the stack;
- minishop's alert pack, loaded by `cluster up --rules`, fires on a broken dependency;
- a k8s:// Prometheus that is not there is refused at `up`, in one line, before anything is made.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from kubernetes import client

from faultkit.observe.probing import PROBE_BAGGAGE
from faultkit.platforms.kubernetes import KubernetesPlatform
from faultkit.platforms.kubernetes.metrics import pod_requests
from faultkit.validators.judge import verify_and_judge
from faultkit.validators.params import ValidationParams
from tests.helpers.cli import cli_env, run_cli
from tests.helpers.minishop_checkout import checkout
from tests.helpers.retrying import validate
from tests.platforms.kubernetes.k8s_support import REPO, new_platform, ns_name, wait_until

# alone: in two CI runs with another module's minishop beside it on the node's two cores, the
# stack's Prometheus and Jaeger stopped answering through their forwards part-way (each time after
# the module's first tests had passed); run by itself it passed every time
pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]

TELEMETRY = REPO / "tools" / "telemetry" / "telemetry"
STACK = "telemetry"
PROMETHEUS = f"k8s://{STACK}/prometheus:9090"


def _telemetry(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TELEMETRY), "cluster", *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


@pytest.fixture(scope="module")
def stack(kubeconfig: str) -> Iterator[dict[str, str]]:
    up = _telemetry("up", "--rules", str(REPO / "apps" / "minishop" / "alerts.yaml"))
    assert up.returncode == 0, up.stderr[-2000:]
    exports = dict(line.removeprefix("export ").split("=", 1) for line in _telemetry("env").stdout.splitlines())
    try:
        yield exports
    finally:
        down = _telemetry("down")
        assert down.returncode == 0, down.stderr[-2000:]


@pytest.fixture(scope="module")
def shop(stack: dict[str, str], kubeconfig: str, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[KubernetesPlatform]:
    assert stack["FAULTKIT_PROMETHEUS"] == stack["FAULTKIT_ALERTS"] == PROMETHEUS
    p = new_platform(tmp_path_factory.mktemp("k8s-otel"), kubeconfig, namespace=ns_name("otel"),
                     otlp_endpoint=stack["FAULTKIT_OTLP_ENDPOINT"], prometheus=PROMETHEUS)
    p.up("minishop", timeout=240)
    yield p
    p.down()


@pytest.fixture(scope="module")
def jaeger(shop: KubernetesPlatform) -> str:
    """The stack's Jaeger as validate --jaeger k8s://... reaches it (closed by the platform's down)."""
    return shop.query_address(f"k8s://{STACK}/jaeger:16686", "--jaeger")


def _trace(jaeger: str, trace_id: str) -> dict[str, Any] | None:
    r = requests.get(f"{jaeger}/api/traces/{trace_id}", timeout=10)
    data = r.json().get("data") if r.status_code == 200 else None
    return data[0] if data else None


def _checkout(shop: KubernetesPlatform, headers: dict[str, str]) -> int:
    return checkout(shop.endpoint("frontend"), "otel-k8s", headers).status_code


def _checkout_ok(shop: KubernetesPlatform, headers: dict[str, str]) -> None:
    """A checkout that succeeds: right after `up` a first one can meet a Service kube-proxy has not
    programmed yet, so it is tried again for a while."""
    wait_until(lambda: _checkout(shop, headers) == 200, 30, "a successful checkout")


def _traced(trace_id: str, more: dict[str, str] | None = None) -> dict[str, str]:
    return {"traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01", **(more or {})}


def _pod_counts(shop: KubernetesPlatform, service: str) -> dict[str, dict[str, float] | None]:
    """Each instance's counts from its pod's own /metrics, through the API server's pod proxy."""
    ns, signal = shop.record().namespace, shop.descriptor.signals.requests
    return {inst: pod_requests(shop.conn, ns, pod["metadata"]["name"], 8080, signal)
            for inst, pod in shop._slot_pods(service).items()}


def test_a_checkout_is_one_trace_in_the_stacks_jaeger(shop: KubernetesPlatform, jaeger: str) -> None:
    trace_id = secrets.token_hex(16)
    _checkout_ok(shop, _traced(trace_id))

    def whole() -> dict[str, Any] | None:
        trace = _trace(jaeger, trace_id)
        services = {trace["processes"][s["processID"]]["serviceName"] for s in trace["spans"]} if trace else set()
        return trace if {"frontend", "checkout", "payment"} <= services else None

    trace = wait_until(whole, 60, f"trace {trace_id} spanning frontend, checkout and payment")
    pods = {t["value"] for p in trace["processes"].values() for t in p.get("tags", []) if t["key"] == "k8s.pod.name"}
    assert any(pod.startswith("checkout-") for pod in pods), pods  # each span says which pod sent it


# Checkouts with checkout's payment port broken once answered 404 here, not the 500 they answer
# locally: the connect left the cluster and the host's network answered it (tools/cluster now refuses
# it, as a cluster does). In one run the stack's Prometheus held no series of the HTTP histogram for
# 60 s while the module's traces arrived; not seen again in four runs.
def test_counts_through_the_stack_agree_with_the_pods_and_its_errors_page(shop: KubernetesPlatform) -> None:
    assert shop.signal_sources()["requests"]["endpoint"] == PROMETHEUS
    wait_until(lambda: all(shop.request_counts("frontend").values()), 60, "frontend's counts in the stack")
    before = _pod_counts(shop, "frontend")
    time.sleep(3.5)  # an export (1 s) and a scrape (1 s) past `before`
    counted = shop.request_counts("frontend")
    after = _pod_counts(shop, "frontend")
    assert set(counted) == set(before) == set(after)
    for inst, by_status in counted.items():
        for status, n in (by_status or {}).items():
            low, high = (before[inst] or {}).get(status, 0.0), (after[inst] or {}).get(status, 0.0)
            assert low <= n <= high, f"{inst} status {status}: pod {low}..{high}, stack {n}"
    assert sum(sum((c or {}).values()) for c in counted.values()) > 0

    firing = 'ALERTS{alertname="ServiceErrorRatioHigh",service_name="checkout",alertstate="firing"}'
    # quiet before the break: a checkout failing right after `up` (a Service not programmed yet) can
    # page for as long as the 30 s rate holds it, as it did once in CI on a busy node
    wait_until(lambda: shop.promql.query(firing) == [], 60, "ServiceErrorRatioHigh for checkout quiet")
    old = shop.read_field("checkout", "checkout", "env.PAYMENT_ADDR")
    shop.patch_field("checkout", "checkout", "env.PAYMENT_ADDR", "payment:1")
    try:
        broken = time.monotonic()
        start = sum((c or {}).get("500", 0.0) for c in shop.request_counts("frontend").values())
        assert [_checkout(shop, {}) for _ in range(3)] == [500, 500, 500]
        wait_until(lambda: sum((c or {}).get("500", 0.0) for c in shop.request_counts("frontend").values())
                   >= start + 3, 30, "the frontend's three 500s through the stack")
        # the load generator's checkouts keep failing: minishop's pack pages on checkout's error ratio
        wait_until(lambda: shop.promql.query(firing), 90, "ServiceErrorRatioHigh firing for checkout")
        # the pack keeps the namespace: another instance on the stack would page apart
        assert [labels["k8s_namespace_name"] for labels, _ in shop.promql.query(firing)] == [shop.target()["namespace"]]
        print(f"ServiceErrorRatioHigh fired {time.monotonic() - broken:.1f} s after the setting was in place")
    finally:
        shop.patch_field("checkout", "checkout", "env.PAYMENT_ADDR", old)


# Rejected on effect-matches-intent in its first two runs: the 5xx did rise through the stack, but
# the screens took the probe's failures off counts the collector had already left them out of
# (validators/screening.py, probe_counted).
@pytest.mark.timeout(900)
def test_validate_reads_each_windows_spans_and_alerts_from_the_stack_in_the_cluster(shop: KubernetesPlatform,
                                                                                    tmp_path: Path) -> None:
    """A config fault validated on the cluster with every signal read through the stack: request
    counts by PromQL, spans from its Jaeger and alerts from its Prometheus, both named as Services
    (k8s://...); `judge` recomputes the verdict, and nothing is left changed."""
    env = shop.read_field("checkout", "checkout", "env.PAYMENT_ADDR")
    params = ValidationParams(window_s=12, interval_s=2.0, repeat=1, jaeger=f"k8s://{STACK}/jaeger:16686",
                              alerts=PROMETHEUS)
    verdict, folder = validate(shop.workspace, shop, "minishop-checkout-env-payment-addr-port", params,
                               evidence=tmp_path / "evidence", record=False)
    assert verdict["status"] == "admitted", verdict["failed_rules"]
    windows = {w.stem: json.loads(w.read_text()) for w in (folder / "windows").glob("*.json")}
    for name, window in windows.items():
        assert window["alerts"]["source"] == PROMETHEUS and window["alerts"]["failed_polls"] == 0, name
        assert window["alerts"]["polls"] > 0 and "error" not in window["traces"], (name, window["traces"])
        assert window["alerts"]["scope"] == {"k8s_namespace_name": shop.target()["namespace"]}, name
        assert window["traces"]["scope"] == shop.telemetry_scope() == {"k8s.namespace.name": shop.target()["namespace"]}
    assert windows["before-1"]["traces"]["spans"] > 0 and windows["after-1"]["traces"]["failing"], windows
    recomputed, same = verify_and_judge(folder)
    assert same and recomputed["status"] == "admitted"
    assert not (shop.workspace.state_dir / "journal.json").exists()
    assert shop.read_field("checkout", "checkout", "env.PAYMENT_ADDR") == env
    raised = [(r["passed"], r.get("detail")) for r in verdict["rules"] if r["rule"] == "alert-raised"]
    print(f"validate through the stack: {verdict['status']}; alert-raised {raised}; after-1 failing paths "
          f"{windows['after-1']['traces']['failing'][:2]}")


def test_the_probes_requests_reach_no_span_and_no_series(shop: KubernetesPlatform, jaeger: str) -> None:
    probe_trace, plain_trace = secrets.token_hex(16), secrets.token_hex(16)
    _checkout_ok(shop, _traced(probe_trace, PROBE_BAGGAGE))
    _checkout_ok(shop, _traced(plain_trace))  # sent after: once it is in, the probe's were flushed
    wait_until(lambda: _trace(jaeger, plain_trace), 60, "the plain checkout's trace")
    time.sleep(3)  # an export and a scrape past the plain trace
    assert _trace(jaeger, probe_trace) is None
    assert shop.promql.query('{faultkit_origin!=""}') == []


def test_up_refuses_a_k8s_prometheus_that_is_not_there(stack: dict[str, str], tmp_path: Path, kubeconfig: str,
                                                       core: client.CoreV1Api) -> None:
    name = ns_name("noprom")
    where = f"k8s://{STACK}/nothing:9090"
    proc = run_cli("up", "--platform", "kubernetes", "--namespace", name, "--kubeconfig", kubeconfig,
                   "--prometheus", where, cwd=REPO, env=cli_env(FAULTKIT_STATE_DIR=str(tmp_path / "state")),
                   timeout=120)
    assert proc.returncode != 0
    assert f"Error: --prometheus {where}: no answer to a query" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip().splitlines()[-1].startswith("Error: --prometheus")
    assert name not in {n.metadata.name for n in core.list_namespace().items}  # refused before anything was made
