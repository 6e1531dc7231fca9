"""OpenTelemetry for a minishop process: traces, the HTTP server metric, and their export.

One set of providers per process (a process is one service), installed by the first App:

- traces: every span carries the baggage entry `faultkit.origin` as an attribute (so a collector
  can drop the symptom probe's traffic); exported by OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is
  set, otherwise kept nowhere (the spans still give log lines their trace and span ids);
- metrics: `http.server.request.duration` (s) under the semantic conventions, read by the
  Prometheus exporter into a registry of the process's own that /metrics serves, and pushed by
  OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.

Start-up time is paid by each of the shop's processes on a small machine, so: the OTLP exporters
are imported only when the endpoint is set (they load protobuf); the W3C propagators and the
resource are made here rather than looked up as installed entry points (each lookup reads the
metadata of every installed distribution, seconds on a loaded host with many).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from opentelemetry import metrics, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.processor.baggage import BaggageSpanProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.sdk.resources import OTELResourceDetector, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from prometheus_client import CollectorRegistry

ORIGIN_KEY = "faultkit.origin"
# the semantic conventions' advised bounds for http.server.request.duration (seconds)
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
SCOPE = "shoplib"
# what requests in and out carry: W3C traceparent/tracestate and baggage
PROPAGATOR = CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])


@dataclass(frozen=True)
class Telemetry:
    service: str
    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    registry: CollectorRegistry  # what /metrics serves
    tracer: trace.Tracer
    duration: metrics.Histogram


_LOCK = threading.Lock()
_INSTALLED: list[Telemetry] = []


def _sdk_version() -> str:
    from opentelemetry.sdk.version import __version__

    return __version__


def _otlp_endpoint() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip())


def _readers(registry: CollectorRegistry) -> list[MetricReader]:
    readers: list[MetricReader] = [PrometheusMetricReader(registry=registry)]
    if _otlp_endpoint():
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
    return readers


def _tracer_provider(resource: Resource) -> TracerProvider:
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BaggageSpanProcessor(lambda key: key == ORIGIN_KEY))
    if _otlp_endpoint():
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def install(service: str) -> Telemetry:
    """The process's telemetry, installed as the global providers on the first call."""
    with _LOCK:
        if _INSTALLED:
            return _INSTALLED[0]
        # the SDK's own attributes, the service's name, and OTEL_RESOURCE_ATTRIBUTES and
        # OTEL_SERVICE_NAME over both when set
        resource = Resource({
            "telemetry.sdk.language": "python", "telemetry.sdk.name": "opentelemetry",
            "telemetry.sdk.version": _sdk_version(), "service.name": service,
        })
        resource = resource.merge(OTELResourceDetector().detect())
        registry = CollectorRegistry(auto_describe=True)
        meter_provider = MeterProvider(resource=resource, metric_readers=_readers(registry))
        tracer_provider = _tracer_provider(resource)
        trace.set_tracer_provider(tracer_provider)
        metrics.set_meter_provider(meter_provider)
        meter = meter_provider.get_meter(SCOPE)
        duration = meter.create_histogram(
            "http.server.request.duration", unit="s",
            description="Duration of HTTP server requests.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        installed = Telemetry(service, tracer_provider, meter_provider, registry,
                              tracer_provider.get_tracer(SCOPE), duration)
        _INSTALLED.append(installed)
        return installed
