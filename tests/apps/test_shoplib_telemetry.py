"""minishop's OpenTelemetry: server and client spans with the semantic conventions, one trace across
services from the W3C headers, the probe's baggage on every span, trace ids in log lines, and the
`http.server.request.duration` histogram as the SDK's Prometheus exporter prints it on /metrics."""

from __future__ import annotations

import io
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

SRC = Path(__file__).resolve().parents[2] / "apps" / "minishop" / "src"
sys.path.insert(0, str(SRC))

from opentelemetry.sdk.trace import ReadableSpan  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402
from shoplib import telemetry  # noqa: E402
from shoplib.client import call  # noqa: E402
from shoplib.http import App, HTTPError  # noqa: E402
from shoplib.log import Logger  # noqa: E402
from shoplib.testing import running  # noqa: E402

TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT = "b7ad6b7169203331"


@pytest.fixture(scope="module")
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    # one set of providers per process, as in a service: the first App installs them
    telemetry.install("t-front").tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter


@pytest.fixture
def shop(spans: InMemorySpanExporter) -> Iterator[tuple[str, str, io.StringIO]]:
    """A 'front' app calling a 'back' app through shoplib's client; yields both addresses and front's log."""
    log = io.StringIO()
    back, front = App("t-back", Logger("t-back", io.StringIO())), App("t-front", Logger("t-front", log))

    @back.route("GET", "/items/<id>")
    def item(req):  # type: ignore[no-untyped-def]
        if req.params["id"] == "bad":
            raise HTTPError(503, "store down")
        return {"id": req.params["id"]}

    @front.route("GET", "/page/<id>")
    def page(req):  # type: ignore[no-untyped-def]
        return {"item": call("back", "T_BACK_ADDR", "GET", f"/items/{req.params['id']}")}

    with running(back) as back_addr, running(front) as front_addr:
        os.environ["T_BACK_ADDR"] = back_addr
        spans.clear()
        try:
            yield front_addr, back_addr, log
        finally:
            del os.environ["T_BACK_ADDR"]


def by_kind(spans: InMemorySpanExporter, kind: SpanKind, wait_for: int = 2) -> list[ReadableSpan]:
    """The finished spans of a kind, once `wait_for` server spans ended: a server span ends after its
    answer is written, so the caller may hold the answer a moment before the span is exported."""
    deadline = time.monotonic() + 5
    while sum(s.kind == SpanKind.SERVER for s in spans.get_finished_spans()) < wait_for:
        assert time.monotonic() < deadline, spans.get_finished_spans()
        time.sleep(0.01)
    return [s for s in spans.get_finished_spans() if s.kind == kind]


def test_one_trace_crosses_both_services_from_the_callers_headers(shop, spans):
    front, _, _ = shop
    headers = {"traceparent": f"00-{TRACE}-{PARENT}-01", "baggage": "faultkit.origin=probe"}
    assert requests.get(f"http://{front}/page/7", headers=headers, timeout=5).json() == {"item": {"id": "7"}}
    servers, clients = by_kind(spans, SpanKind.SERVER), by_kind(spans, SpanKind.CLIENT)
    assert sorted(s.name for s in servers) == ["GET /items/<id>", "GET /page/<id>"]
    assert [s.name for s in clients] == ["GET"]
    assert {format(s.context.trace_id, "032x") for s in servers + clients} == {TRACE}
    outer = next(s for s in servers if s.name == "GET /page/<id>")
    inner = next(s for s in servers if s.name == "GET /items/<id>")
    assert outer.parent is not None and format(outer.parent.span_id, "016x") == PARENT
    assert clients[0].parent is not None and clients[0].parent.span_id == outer.context.span_id
    assert inner.parent is not None and inner.parent.span_id == clients[0].context.span_id
    assert dict(outer.attributes or {}) == {
        "http.request.method": "GET", "url.path": "/page/7", "http.route": "/page/<id>",
        "http.response.status_code": 200, "faultkit.origin": "probe"}
    # the baggage went on with the call: the callee's span carries the origin too
    assert (inner.attributes or {}).get("faultkit.origin") == "probe"
    assert (clients[0].attributes or {})["http.response.status_code"] == 200


def test_a_5xx_is_an_error_span_and_its_log_line_names_the_trace(shop, spans):
    front, _, log = shop
    assert requests.get(f"http://{front}/page/bad", timeout=5).status_code == 500
    servers = {s.name: s for s in by_kind(spans, SpanKind.SERVER)}
    assert servers["GET /items/<id>"].status.status_code == StatusCode.ERROR
    assert servers["GET /page/<id>"].status.status_code == StatusCode.ERROR
    assert (servers["GET /page/<id>"].attributes or {})["http.response.status_code"] == 500
    assert "faultkit.origin" not in (servers["GET /page/<id>"].attributes or {})  # no baggage, no origin
    line = json.loads(log.getvalue().splitlines()[-1])
    assert line["level"] == "ERROR" and "request to back failed" in line["message"]
    page = servers["GET /page/<id>"].context
    assert (line["trace_id"], line["span_id"]) == (format(page.trace_id, "032x"), format(page.span_id, "016x"))


def test_probe_and_scrape_endpoints_make_no_span(shop, spans):
    front, _, _ = shop
    for path in ("/healthz", "/readyz", "/metrics"):
        assert requests.get(f"http://{front}{path}", timeout=5).status_code == 200
    assert spans.get_finished_spans() == ()


def counts(addr: str, route: str) -> dict[str, float]:
    """http_server_request_duration_seconds_count by status for one route, as /metrics prints it."""
    text = requests.get(f"http://{addr}/metrics", timeout=5).text
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "http_server_request_duration_seconds_count" and s.labels.get("http_route") == route:
                assert s.labels["http_request_method"] == "GET"
                out[s.labels["http_response_status_code"]] = out.get(s.labels["http_response_status_code"], 0) + s.value
    return out


def test_the_server_duration_histogram_on_metrics(shop):
    front, back, _ = shop
    before = counts(back, "/items/<id>")
    requests.get(f"http://{front}/page/1", timeout=5)
    requests.get(f"http://{front}/page/bad", timeout=5)
    after = counts(back, "/items/<id>")
    assert after.get("200", 0) - before.get("200", 0) == 1
    assert after.get("503", 0) - before.get("503", 0) == 1
    text = requests.get(f"http://{back}/metrics", timeout=5).text
    assert "# TYPE http_server_request_duration_seconds histogram" in text
    # the semantic conventions' advised bounds, the same as prometheus_client's defaults: replay reads them
    assert 'le="0.005"' in text and 'le="10.0"' in text
    assert "healthz" not in text and "/metrics" not in text


class _At:
    """The one thing the symptom probe asks of a platform: where the probed service answers."""

    def __init__(self, addr: str) -> None:
        self.addr = addr

    def endpoint(self, service: str, port: int | None = None) -> str:
        return f"http://{self.addr}"


def test_the_symptom_probes_requests_are_marked_on_every_span(shop, spans):
    from faultkit.catalog.model import Probe
    from faultkit.observe.sampler import Sampler

    front, _, _ = shop
    sampler = Sampler(_At(front), (), Probe(service="t-front", path="/page/3"))  # type: ignore[arg-type]
    try:
        assert sampler.run_probe()["ok"]
    finally:
        sampler.close()
    servers = by_kind(spans, SpanKind.SERVER)
    assert {(s.attributes or {}).get("faultkit.origin") for s in servers} == {"probe"}
    assert {(s.attributes or {}).get("faultkit.origin") for s in by_kind(spans, SpanKind.CLIENT)} == {"probe"}
