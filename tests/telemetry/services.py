"""Two small real services instrumented with the OpenTelemetry Python SDK, for tests/telemetry.

"back" is an HTTP server (a thread, with a TracerProvider and MeterProvider of its own); "front"
handles a request by calling back over HTTP with W3C trace context and baggage in the headers.
Both copy the baggage entry faultkit.origin onto their spans and metric points, as instrumented
services do for faultkit's probe. A third provider, "probe-agent", carries faultkit.origin=probe on
its resource. Exports go by OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT; prints one JSON line with the
trace ids it made.

    python -m tests.telemetry.services --ok 3 --errors 2 --probes 4
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry import baggage, context, propagate
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

ORIGIN = "faultkit.origin"
SEMCONV_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0]


class BaggageOrigin(SpanProcessor):
    """Copies the faultkit.origin baggage entry onto every span started in its context."""

    def on_start(self, span: Span, parent_context: context.Context | None = None) -> None:
        origin = baggage.get_baggage(ORIGIN, parent_context)
        if origin is not None:
            span.set_attribute(ORIGIN, str(origin))

    def on_end(self, span: ReadableSpan) -> None:
        pass


class Service:
    def __init__(self, name: str, **resource: str) -> None:
        res = Resource.create({"service.name": name, **resource})
        self.traces = TracerProvider(resource=res)
        self.traces.add_span_processor(BaggageOrigin())
        self.traces.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(), schedule_delay_millis=200))
        reader = PeriodicExportingMetricReader(OTLPMetricExporter(), export_interval_millis=500)
        self.metrics = MeterProvider(resource=res, metric_readers=[reader])
        self.tracer = self.traces.get_tracer("faultkit.tests.telemetry")
        # The semantic conventions' buckets: without the advice the SDK's defaults (0, 5, 10, ... 10000)
        # are meant for milliseconds and would put every request of a seconds histogram in the first.
        self.duration = self.metrics.get_meter("faultkit.tests.telemetry").create_histogram(
            "http.server.request.duration", unit="s", description="Duration of HTTP server requests.",
            explicit_bucket_boundaries_advisory=SEMCONV_BUCKETS)

    def record(self, route: str, status: int, seconds: float) -> None:
        attributes: dict[str, Any] = {"http.request.method": "GET", "http.route": route,
                                      "http.response.status_code": status}
        origin = baggage.get_baggage(ORIGIN)
        if origin is not None:
            attributes[ORIGIN] = str(origin)
        self.duration.record(seconds, attributes)

    def shutdown(self) -> None:
        self.traces.shutdown()
        self.metrics.shutdown()


def serve_back(back: Service) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            began = time.monotonic()
            # The headers object, not a dict of it: its get() ignores case (urllib sends "Traceparent").
            token = context.attach(propagate.extract(self.headers))
            try:
                with back.tracer.start_as_current_span("GET /pay", kind=SpanKind.SERVER) as span:
                    status = 500 if self.path.endswith("fail=1") else 200
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        span.set_status(Status(StatusCode.ERROR, "payment declined"))
                    back.record("/pay", status, time.monotonic() - began)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            finally:
                context.detach(token)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def front_request(front: Service, back_url: str, fail: bool, probe: bool) -> str:
    """front handles GET /checkout: a SERVER span, then a CLIENT span calling back."""
    began = time.monotonic()
    ctx = baggage.set_baggage(ORIGIN, "probe") if probe else context.get_current()
    token = context.attach(ctx)
    try:
        with front.tracer.start_as_current_span("GET /checkout", kind=SpanKind.SERVER) as server_span:
            with front.tracer.start_as_current_span("GET", kind=SpanKind.CLIENT) as client_span:
                headers: dict[str, str] = {}
                propagate.inject(headers)
                url = f"{back_url}/pay" + ("?fail=1" if fail else "")
                try:
                    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as resp:
                        status = resp.status
                except urllib.error.HTTPError as err:
                    status = err.code
                client_span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    client_span.set_status(Status(StatusCode.ERROR))
            front_status = 502 if status >= 500 else 200
            server_span.set_attribute("http.response.status_code", front_status)
            if front_status >= 500:
                server_span.set_status(Status(StatusCode.ERROR, "payment failed"))
            front.record("/checkout", front_status, time.monotonic() - began)
            return format(server_span.get_span_context().trace_id, "032x")
    finally:
        context.detach(token)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--ok", type=int, default=3)
    parser.add_argument("--errors", type=int, default=2)
    parser.add_argument("--probes", type=int, default=4)
    args = parser.parse_args(argv)
    front, back = Service("front"), Service("back")
    agent = Service("probe-agent", **{ORIGIN: "probe"})
    server = serve_back(back)
    back_url = f"http://127.0.0.1:{server.server_address[1]}"
    made: dict[str, list[str]] = {"ok": [], "errors": [], "probes": []}
    for _ in range(args.ok):
        made["ok"].append(front_request(front, back_url, fail=False, probe=False))
    for _ in range(args.errors):
        made["errors"].append(front_request(front, back_url, fail=True, probe=False))
    for index in range(args.probes):
        made["probes"].append(front_request(front, back_url, fail=index % 2 == 1, probe=True))
    with agent.tracer.start_as_current_span("probe GET /checkout", kind=SpanKind.CLIENT):
        pass
    server.shutdown()
    for service in (front, back, agent):
        service.shutdown()
    print(json.dumps(made))
    return 0


if __name__ == "__main__":
    sys.exit(main())
