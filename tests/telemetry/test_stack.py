"""The real telemetry_stack: Jaeger v2 built from tools/telemetry/go, Debian's Prometheus, and two services on the
real OpenTelemetry Python SDK sending OTLP/HTTP (issue 30)."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests

from tests.helpers.waiting import wait_until
from tests.telemetry.conftest import REPO, Stack, stack_env, telemetry
from tests.telemetry.services import SEMCONV_BUCKETS

pytestmark = pytest.mark.live

OK, ERRORS, PROBES = 3, 2, 4


@pytest.fixture(scope="module")
def sent(telemetry_stack: Stack) -> dict[str, list[str]]:
    """Trace ids of the requests the two services handled: ok, errors (502 from front, 500 from back), probes."""
    env = dict(telemetry_stack.env, OTEL_EXPORTER_OTLP_ENDPOINT=telemetry_stack.exports["OTEL_EXPORTER_OTLP_ENDPOINT"])
    run = subprocess.run([sys.executable, "-m", "tests.telemetry.services", "--ok", str(OK), "--errors", str(ERRORS),
                          "--probes", str(PROBES)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    made: dict[str, list[str]] = json.loads(run.stdout)
    return made


def query(telemetry_stack: Stack, promql: str) -> list[dict[str, Any]]:
    resp = requests.get(f"{telemetry_stack.prometheus}/api/v1/query", params={"query": promql}, timeout=10)
    resp.raise_for_status()
    result: list[dict[str, Any]] = resp.json()["data"]["result"]
    return result


def by_labels(result: list[dict[str, Any]], *labels: str) -> dict[tuple[str, ...], float]:
    return {tuple(series["metric"].get(label, "") for label in labels): float(series["value"][1])
            for series in result}


def jaeger_trace(telemetry_stack: Stack, trace_id: str) -> dict[str, Any] | None:
    resp = requests.get(f"{telemetry_stack.jaeger}/api/traces/{trace_id}", timeout=10)
    if resp.status_code == 404:
        return None
    resp.raise_for_status()
    data = resp.json().get("data") or []
    return data[0] if data else None


def test_one_trace_holds_spans_of_both_services(telemetry_stack: Stack, sent: dict[str, list[str]]) -> None:
    def whole(trace_id: str) -> dict[str, Any] | None:
        trace = jaeger_trace(telemetry_stack, trace_id)
        return trace if trace and len(trace["spans"]) == 3 else None

    for trace_id in sent["ok"] + sent["errors"]:
        trace = wait_until(functools.partial(whole, trace_id), 30, f"trace {trace_id} with 3 spans in Jaeger")
        services = {trace["processes"][span["processID"]]["serviceName"]: span for span in trace["spans"]
                    if span["operationName"] != "GET"}
        assert set(services) == {"front", "back"}
        client = next(span for span in trace["spans"] if span["operationName"] == "GET")
        back_parent = [ref["spanID"] for ref in services["back"]["references"] if ref["refType"] == "CHILD_OF"]
        assert back_parent == [client["spanID"]]  # back's SERVER span is a child of front's CLIENT span
    listed = requests.get(f"{telemetry_stack.jaeger}/api/traces", params={"service": "front", "limit": "100"},
                          timeout=10).json()
    assert sorted(t["traceID"] for t in listed["data"]) == sorted(sent["ok"] + sent["errors"])
    services = requests.get(f"{telemetry_stack.jaeger}/api/services", timeout=10).json()["data"]
    assert sorted(services) == ["back", "front"]
    now_ms = int(time.time() * 1000)
    links = requests.get(f"{telemetry_stack.jaeger}/api/dependencies", params={"endTs": now_ms, "lookback": 3_600_000},
                         timeout=10).json()["data"]
    # The memory store links every parent span to its child, so front -> front (SERVER to CLIENT) is there too.
    assert ("front", "back", OK + ERRORS) in [(link["parent"], link["child"], link["callCount"]) for link in links]


def test_spanmetrics_count_server_calls_by_status(telemetry_stack: Stack, sent: dict[str, list[str]]) -> None:
    expected = {("front", "STATUS_CODE_UNSET"): OK, ("front", "STATUS_CODE_ERROR"): ERRORS,
                ("back", "STATUS_CODE_UNSET"): OK, ("back", "STATUS_CODE_ERROR"): ERRORS}

    def counted() -> dict[tuple[str, ...], float] | None:
        found = by_labels(query(telemetry_stack, 'traces_span_metrics_calls_total{span_kind="SPAN_KIND_SERVER"}'),
                          "service_name", "status_code")
        return found if found == expected else None

    wait_until(counted, 30, f"spanmetrics calls of the SERVER spans to be {expected}")
    series = query(telemetry_stack,
                   'traces_span_metrics_calls_total{service_name="back", status_code="STATUS_CODE_ERROR"}')
    assert series[0]["metric"]["span_name"] == "GET /pay"
    buckets = query(telemetry_stack, 'traces_span_metrics_duration_milliseconds_bucket{service_name="front", '
                           'span_kind="SPAN_KIND_SERVER", le="+Inf"}')
    assert sum(float(s["value"][1]) for s in buckets) == OK + ERRORS


def test_sdk_histogram_reaches_prometheus(telemetry_stack: Stack, sent: dict[str, list[str]]) -> None:
    expected = {("back", "200"): OK, ("back", "500"): ERRORS, ("front", "200"): OK, ("front", "502"): ERRORS}

    def counted() -> dict[tuple[str, ...], float] | None:
        found = by_labels(query(telemetry_stack, "http_server_request_duration_seconds_count"),
                          "service_name", "http_response_status_code")
        return found if found == expected else None

    wait_until(counted, 30, f"http_server_request_duration_seconds_count to be {expected}")
    series = query(telemetry_stack, 'http_server_request_duration_seconds_bucket{service_name="back", le="+Inf", '
                          'http_response_status_code="500"}')
    assert [s["metric"]["http_route"] for s in series] == ["/pay"]
    bounds = query(telemetry_stack, 'http_server_request_duration_seconds_bucket{service_name="back", '
                                    'http_response_status_code="200"}')
    assert sorted(float(s["metric"]["le"]) for s in bounds) == [*SEMCONV_BUCKETS, float("inf")]


def test_probe_traffic_reaches_neither_jaeger_nor_prometheus(telemetry_stack: Stack,
                                                             sent: dict[str, list[str]]) -> None:
    # Once the ordinary requests are counted, everything sent before them has been through the pipeline.
    test_spanmetrics_count_server_calls_by_status(telemetry_stack, sent)
    test_sdk_histogram_reaches_prometheus(telemetry_stack, sent)
    for trace_id in sent["probes"]:
        assert jaeger_trace(telemetry_stack, trace_id) is None
    assert query(telemetry_stack, '{__name__=~".+", faultkit_origin=~".+"}') == []
    assert query(telemetry_stack, '{__name__=~".+", service_name="probe-agent"}') == []
    # ...and the collector counted what it dropped, on its own port that Prometheus does not scrape.
    own = requests.get(telemetry_stack.collector_telemetry, timeout=10).text
    dropped = [line for line in own.splitlines() if line.startswith("otelcol_processor_filter_spans_filtered")]
    assert dropped and float(dropped[0].rsplit(" ", 1)[1]) == PROBES * 3 + 1


def test_a_process_that_exits_at_start_up_is_named_with_its_log(tmp_path: Path) -> None:
    env = stack_env(tmp_path / "state")
    env["FAULTKIT_TELEMETRY_JAEGER"] = shutil.which("false") or "/bin/false"
    up = telemetry("up", env=env)
    log = tmp_path / "state" / "logs" / "jaeger.log"
    assert up.returncode == 1
    assert up.stderr == f"Error: telemetry up: jaeger exited during start-up (no output); its log: {log}\n"
    assert telemetry("status", env=env).returncode == 1


def test_up_on_a_running_stack_says_so(telemetry_stack: Stack) -> None:
    again = telemetry("up", env=telemetry_stack.env)
    assert again.returncode == 0 and "already up" in again.stdout


def test_down_leaves_no_process(telemetry_stack: Stack) -> None:
    status = json.loads(telemetry("status", "--json", env=telemetry_stack.env).stdout)
    pids = [pid for pid in status["processes"].values() if pid]
    assert len(pids) == 2
    children = [child.pid for pid in pids for child in psutil.Process(pid).children(recursive=True)]
    down = telemetry("down", env=telemetry_stack.env)
    assert down.returncode == 0, down.stderr
    assert "stopped prometheus, jaeger" in down.stdout
    assert not [pid for pid in pids + children if psutil.pid_exists(pid)
                and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    mine = [proc.pid for proc in psutil.process_iter(["cmdline", "environ"])
            if str(telemetry_stack.state) in " ".join(proc.info["cmdline"] or [])]
    assert mine == []
    assert not telemetry_stack.state.exists()
    again = telemetry("down", env=telemetry_stack.env)
    assert again.returncode == 0 and "nothing was running" in again.stdout
