"""Request counts by PromQL for each kind of `signals.requests`, against a real Prometheus (Debian's
`prometheus`) scraping series shaped as each source prints them: the SDK's histogram count per pod,
the collector's spanmetrics calls (resource attributes as labels), and a user's own counter."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
import yaml

from faultkit.apps.signals import signals_from_data
from faultkit.platforms.kubernetes.metrics import PromQL

pytestmark = pytest.mark.live

HIST = "http_server_request_duration_seconds_count"
CALLS = "traces_span_metrics_calls_total"
SPAN = 'k8s_namespace_name="shop",k8s_pod_name="front-1",service_name="front"'
SERIES = [
    (HIST, 'namespace="shop",pod="front-1",http_route="/",http_response_status_code="200"', 7),
    (HIST, 'namespace="shop",pod="front-1",http_route="/cart",http_response_status_code="200"', 3),
    (HIST, 'namespace="shop",pod="front-1",http_route="/cart",http_response_status_code="500"', 2),
    (HIST, 'namespace="shop",pod="front-2",http_route="/",http_response_status_code="200"', 4),
    (HIST, 'namespace="other",pod="front-1",http_route="/",http_response_status_code="200"', 99),
    ("up", 'namespace="shop",pod="front-1"', 1),
    ("up", 'namespace="shop",pod="front-2"', 1),
    (CALLS, f'{SPAN},span_kind="SPAN_KIND_SERVER",status_code="STATUS_CODE_UNSET",span_name="GET /"', 5),
    (CALLS, f'{SPAN},span_kind="SPAN_KIND_SERVER",status_code="STATUS_CODE_OK",span_name="GET /cart"', 1),
    (CALLS, f'{SPAN},span_kind="SPAN_KIND_SERVER",status_code="STATUS_CODE_ERROR",span_name="GET /cart"', 2),
    (CALLS, f'{SPAN},span_kind="SPAN_KIND_CLIENT",status_code="STATUS_CODE_ERROR",span_name="GET"', 40),
    ("shop_hits_total", 'ns="shop",instance_pod="front-2",code="503"', 6),
]
EXPOSITION = "".join(f"{name}{{{labels}}} {value}\n" for name, labels, value in SERIES)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("the prometheus binary is missing: install Debian's `prometheus` package (.ci/run does)",
                    pytrace=False)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            body = EXPOSITION.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    target = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=target.serve_forever, daemon=True).start()
    tmp = tmp_path_factory.mktemp("prometheus")
    conf = {"global": {"scrape_interval": "1s", "scrape_timeout": "900ms"},
            "scrape_configs": [{"job_name": "series", "honor_labels": True,
                                "static_configs": [{"targets": [f"127.0.0.1:{target.server_address[1]}"]}]}]}
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(conf))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([binary, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=(tmp / "log").open("w"))
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (tmp / "log").read_text()[-2000:]
            try:
                r = requests.get(f"{url}/api/v1/query", params={"query": "shop_hits_total"}, timeout=1)
                if r.status_code == 200 and r.json()["data"]["result"]:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "Prometheus did not scrape the series"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        target.shutdown()


def test_the_sdks_histogram_count_by_pod_and_status(prometheus: str) -> None:
    signal = signals_from_data(None).requests
    assert PromQL(prometheus).requests_by_pod("shop", ["front-1", "front-2", "front-3"], signal) == {
        "front-1": {"200": 10.0, "500": 2.0}, "front-2": {"200": 4.0},
        "front-3": None}  # not scraped (no `up`): did not answer


def test_spanmetrics_server_calls_with_error_spans_as_5xx(prometheus: str) -> None:
    signal = signals_from_data({"requests": {"kind": "spanmetrics"}}).requests
    assert PromQL(prometheus).requests_by_pod("shop", ["front-1", "front-2"], signal) == {
        "front-1": {"200": 6.0, "500": 2.0},  # the client span's errors are the callee's, not front's
        "front-2": {}}  # no series yet: nothing counted, not a pod that did not answer


def test_a_users_query_template(prometheus: str) -> None:
    signal = signals_from_data({"requests": {
        "kind": "promql", "pod_label": "instance_pod", "status_label": "code",
        "query": 'sum by (instance_pod, code) (shop_hits_total{ns="$namespace",instance_pod=~"$pods"})'}}).requests
    assert PromQL(prometheus).requests_by_pod("shop", ["front-1", "front-2"], signal) == {
        "front-1": {}, "front-2": {"503": 6.0}}
