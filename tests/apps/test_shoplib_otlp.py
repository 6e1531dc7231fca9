"""A minishop service pushes its traces and metrics by OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is
set, and runs and stops cleanly exporting nothing when it is not: a real service process, the SDK's
real exporters, and an OTLP/HTTP receiver here that decodes what arrives with OpenTelemetry's protos."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

pytestmark = pytest.mark.live

SRC = Path(__file__).resolve().parents[2] / "apps" / "minishop" / "src"
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


class Receiver:
    """An OTLP/HTTP endpoint (protobuf): every body posted to /v1/traces and /v1/metrics, decoded."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, str, str]] = []  # (service.name, span name, trace id)
        self.metrics: list[tuple[str, str]] = []  # (service.name, metric name)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.take(self.path, body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def take(self, path: str, body: bytes) -> None:
        if path == "/v1/traces":
            req = ExportTraceServiceRequest.FromString(body)
            for rs in req.resource_spans:
                service = next(a.value.string_value for a in rs.resource.attributes if a.key == "service.name")
                self.spans += [(service, s.name, s.trace_id.hex()) for ss in rs.scope_spans for s in ss.spans]
        elif path == "/v1/metrics":
            req = ExportMetricsServiceRequest.FromString(body)
            for rm in req.resource_metrics:
                service = next(a.value.string_value for a in rm.resource.attributes if a.key == "service.name")
                self.metrics += [(service, m.name) for sm in rm.scope_metrics for m in sm.metrics]


@pytest.fixture
def build(tmp_path: Path) -> Path:
    """productcatalog laid out as its build is: the service folder with shoplib/ beside main.py."""
    out = tmp_path / "productcatalog"
    shutil.copytree(SRC / "productcatalog", out, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    shutil.copytree(SRC / "shoplib", out / "shoplib", ignore=shutil.ignore_patterns("__pycache__"))
    return out


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def start(build: Path) -> Iterator[object]:
    procs: list[subprocess.Popen[str]] = []

    def run(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
        port = _port()
        full = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        proc = subprocess.Popen([sys.executable, "main.py"], cwd=build, env={**full, "PORT": str(port), **env},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(proc)
        deadline = time.monotonic() + 120  # a loaded machine: the SDK's imports are the start-up
        while True:
            assert proc.poll() is None, proc.communicate()[0]
            try:
                if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    return proc, f"127.0.0.1:{port}"
            except requests.RequestException:
                assert time.monotonic() < deadline, "the service did not answer /healthz"
                time.sleep(0.05)

    yield run
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    return proc.returncode, out


def test_traces_and_metrics_are_pushed_by_otlp_when_an_endpoint_is_set(start) -> None:
    receiver = Receiver()
    try:
        proc, addr = start({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100",
                            "OTEL_METRIC_EXPORT_INTERVAL": "300"})
        headers = {"traceparent": f"00-{TRACE}-00f067aa0ba902b7-01"}
        assert requests.get(f"http://{addr}/products", headers=headers, timeout=5).status_code == 200
        deadline = time.monotonic() + 20
        while not (receiver.spans and ("productcatalog", "http.server.request.duration") in receiver.metrics):
            assert time.monotonic() < deadline, (receiver.spans, receiver.metrics)
            time.sleep(0.1)
        assert ("productcatalog", "GET /products", TRACE) in receiver.spans
        code, out = _stop(proc)
        assert code == 0, out
    finally:
        receiver.server.shutdown()


def test_without_an_endpoint_nothing_is_exported_and_nothing_fails(start) -> None:
    proc, addr = start({})
    for _ in range(5):
        assert requests.get(f"http://{addr}/products", timeout=5).status_code == 200
    assert "http_server_request_duration_seconds_count" in requests.get(f"http://{addr}/metrics", timeout=5).text
    code, out = _stop(proc)
    assert code == 0 and "Traceback" not in out and "Exception" not in out, out
