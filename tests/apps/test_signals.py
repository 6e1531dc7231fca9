"""A descriptor's `signals:` (issue 30): where request counts come from, with OpenTelemetry's
conventions as defaults, read from what the SDK's Prometheus exporter really prints."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import CollectorRegistry, generate_latest

from faultkit.apps.descriptor import load_app
from faultkit.apps.signals import RequestSignal, prometheus_labels, signals_from_data
from faultkit.errors import InputError
from faultkit.platforms.counters import parse_requests
from faultkit.replay.traffic import parse as parse_traffic

BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0]


def sdk_exposition(samples: list[tuple[str, int, float]]) -> str:
    """/metrics as an OpenTelemetry-instrumented server prints it: (route, status, seconds) recorded."""
    registry = CollectorRegistry(auto_describe=True)
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    histogram = provider.get_meter("t").create_histogram(
        "http.server.request.duration", unit="s", explicit_bucket_boundaries_advisory=BUCKETS)
    for route, status, seconds in samples:
        histogram.record(seconds, {"http.request.method": "GET", "http.route": route,
                                   "http.response.status_code": status})
    try:
        return generate_latest(registry).decode()
    finally:
        provider.shutdown()


def test_an_instrumented_app_needs_no_signals_section(ws):
    default = RequestSignal(kind="exposition", metric="http_server_request_duration_seconds_count",
                            status_label="http_response_status_code")
    assert signals_from_data(None).requests == default and not default.probe_marked
    # minishop declares only that it marks the probe's requests on its histogram (shoplib/http.py)
    app = load_app(ws, "minishop")
    assert app.signals.requests == RequestSignal(**{**default.__dict__, "probe_marked": True})
    assert app.signals.traces.jaeger == ""


def test_the_default_reads_the_sdks_exposition_by_status_over_routes():
    text = sdk_exposition([("/", 200, 0.01), ("/cart", 200, 0.02), ("/cart", 500, 0.3), ("/cart", 503, 0.01)])
    assert parse_requests(text) == {"200": 2.0, "500": 1.0, "503": 1.0}
    # the histogram's own buckets give replay its slow requests: above 0.25 s, one
    assert parse_traffic(text, 0.25) == {"requests": {"200": 2.0, "500": 1.0, "503": 1.0}, "count": 4.0, "slow": 1.0}


def test_a_declared_counter_and_label_are_read_instead():
    text = ('# TYPE shop_hits_total counter\nshop_hits_total{code="200",route="/"} 7\n'
            'shop_hits_total{code="500",route="/x"} 2\nshop_hits_total{code="500",route="/y"} 1\n')
    signal = signals_from_data({"requests": {"metric": "shop_hits_total", "status_label": "code"}}).requests
    assert parse_requests(text, signal) == {"200": 7.0, "500": 3.0}
    assert parse_requests(text) == {}  # not the conventions' histogram: nothing counted


def test_spanmetrics_counts_error_spans_as_5xx_and_the_rest_as_2xx():
    signal = signals_from_data({"requests": {"kind": "spanmetrics"}}).requests
    assert signal.promql("shop", ["front-1", "front-2"]) == (
        'sum by (k8s_pod_name, status_code) (traces_span_metrics_calls_total{k8s_namespace_name="shop",'
        'k8s_pod_name=~"front-1|front-2",faultkit_origin!="probe",span_kind="SPAN_KIND_SERVER"})')
    assert signal.status_of({"status_code": "STATUS_CODE_ERROR"}) == "500"
    assert signal.status_of({"status_code": "STATUS_CODE_UNSET"}) == "200"
    assert signal.status_of({"status_code": "STATUS_CODE_OK"}) == "200"


def test_exposition_by_promql_and_a_users_query_template():
    # scraped from the pods by Prometheus' pod discovery, or else pushed over OTLP through a collector
    assert RequestSignal().promql("shop", ["a-1"]) == (
        'sum by (pod, http_response_status_code) (http_server_request_duration_seconds_count'
        '{namespace="shop",pod=~"a-1",faultkit_origin!="probe"}) or sum by (pod, http_response_status_code) '
        '(label_replace(http_server_request_duration_seconds_count{k8s_namespace_name="shop",k8s_pod_name=~"a-1",'
        'faultkit_origin!="probe"}, '
        '"pod", "$1", "k8s_pod_name", "(.*)"))')
    query = 'sum by (pod, code) (rate_me{ns="$namespace",pod=~"$pods"})'
    signal = signals_from_data({"requests": {"kind": "promql", "query": query, "status_label": "code"}}).requests
    assert signal.promql("shop", ["a-1", "b-2"]) == 'sum by (pod, code) (rate_me{ns="shop",pod=~"a-1|b-2"})'
    assert signal.status_of({"code": "502"}) == "502"


def _with_signals(ws, text: str) -> None:
    path = ws.apps_dir / "minishop" / "app.yaml"
    path.write_text(path.read_text().replace("\nsignals:\n  requests: {probe_marked: true}\n", f"\nsignals:\n{text}"))


@pytest.mark.parametrize(("text", "message"), [
    ("  requests: {kind: promql}\n", r"app.yaml:\d+: signals.requests: 'query' is required"),
    ("  requests: {kind: prometheus}\n",
     r"app.yaml:\d+: signals.requests.kind: expected one of exposition, spanmetrics, promql, found 'prometheus'"),
    ("  requests: {query: 'up'}\n", r"app.yaml:\d+: signals.requests: "),
    ("  traces: {jaeger: 'localhost:16686'}\n", r"app.yaml:\d+: signals.traces.jaeger: "),
    ("  requests: {probe_marked: 'yes'}\n", r"app.yaml:\d+: signals.requests.probe_marked: "),
])
def test_a_bad_signals_section_is_one_located_line(ws, text, message):
    _with_signals(ws, text)
    with pytest.raises(InputError, match=message) as err:
        load_app(ws, "minishop")
    assert "\n" not in str(err.value)


def test_a_declared_section_is_read(ws):
    _with_signals(ws, "  requests: {kind: spanmetrics, metric: calls_total}\n"
                      "  traces: {jaeger: 'http://jaeger.example:16686'}\n")
    app = load_app(ws, "minishop")
    assert (app.signals.requests.kind, app.signals.requests.metric) == ("spanmetrics", "calls_total")
    assert app.signals.requests.pod_label == "k8s_pod_name"
    assert app.signals.traces.jaeger == "http://jaeger.example:16686"


def test_resource_attributes_become_the_labels_prometheus_holds():
    assert prometheus_labels({"k8s.namespace.name": "shop-1", "service.instance-id": "a"}) == {
        "k8s_namespace_name": "shop-1", "service_instance_id": "a"}
    assert prometheus_labels({}) == {}
