"""Where an application's signals come from: the descriptor's `signals:` section (issue 30).

`requests` says where request counts by status come from. Its defaults are OpenTelemetry's HTTP
semantic conventions as the SDK's Prometheus exporter prints them, so an instrumented app needs no
`signals:` at all:

- `exposition` (the default): each instance's /metrics in Prometheus text format, read as the
  counter `metric` (default `http_server_request_duration_seconds_count`, the count of the
  `http.server.request.duration` histogram) by its label `status_label` (default
  `http_response_status_code`), summed over every other label. On a cluster given a Prometheus,
  the same series by PromQL, by the `pod` and `namespace` labels Prometheus' pod discovery gives,
  or, for pods it did not scrape, pushed over OTLP through a collector, by the resource attributes
  `k8s_pod_name` and `k8s_namespace_name`.
- `spanmetrics`: PromQL over the collector's spanmetrics connector, its calls counter (`metric`,
  default `traces_span_metrics_calls_total`) for SERVER spans. Spans carry no HTTP status there,
  only the span status: `STATUS_CODE_ERROR` is counted as a 5xx ("500"), every other status as a
  2xx ("200"), so a 4xx is an OK call, as the HTTP conventions set a server span's status. The
  series must carry the pod and namespace as labels (`pod_label`, `namespace_label`, by default
  `k8s_pod_name` and `k8s_namespace_name`: the k8sattributes processor's resource attributes, made
  spanmetrics dimensions).
- `promql`: the user's own `query`, where `$namespace` is the app's namespace and `$pods` a regex
  alternation of its pod names; the answer's samples are read by `pod_label` and `status_label`.

`probe_marked` says the app marks the symptom probe's requests on the metric it counts them in
(the probe's baggage entry `faultkit.origin` as an attribute, the label `faultkit_origin`), as
minishop does. Read through PromQL, such counts leave the probe out: the telemetry stack's collector
drops the marked points, and the queries made here leave out marked series where a Prometheus
scraped them. The screens then take none of the probe's requests off (validators/screening.py).
A `promql` query of the user's own should leave them out too when it sets `probe_marked`.

`traces` is where traces are queried: a Jaeger query URL (its HTTP API), for those who read them.
`logs` is the services' log line format, read by faultkit/apps/logformat.py into the descriptor's
`log_format`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

EXPOSITION, SPANMETRICS, PROMQL = "exposition", "spanmetrics", "promql"
KINDS = (EXPOSITION, SPANMETRICS, PROMQL)
HISTOGRAM_COUNT = "http_server_request_duration_seconds_count"
SPANMETRICS_CALLS = "traces_span_metrics_calls_total"
ERROR_STATUS, OK_STATUS = "500", "200"  # spanmetrics' span status, as the screens count statuses
PROBE_MATCHER = 'faultkit_origin!="probe"'  # series the probe's marked requests are not counted in

# the pod and namespace of series pushed over OTLP: the resource attributes k8s.pod.name and
# k8s.namespace.name (set by the kubernetes platform's --otlp-endpoint, or the k8sattributes processor)
PUSHED_POD, PUSHED_NAMESPACE = "k8s_pod_name", "k8s_namespace_name"
NAMESPACE_ATTRIBUTE = "k8s.namespace.name"


def prometheus_labels(attributes: Mapping[str, str]) -> dict[str, str]:
    """Resource attributes as the collector's Prometheus exporter names them as labels: every
    character other than a letter, digit or underscore becomes an underscore."""
    return {re.sub(r"[^a-zA-Z0-9_]", "_", key): value for key, value in attributes.items()}

_DEFAULTS: dict[str, dict[str, str]] = {
    EXPOSITION: {"metric": HISTOGRAM_COUNT, "status_label": "http_response_status_code",
                 "pod_label": "pod", "namespace_label": "namespace"},
    SPANMETRICS: {"metric": SPANMETRICS_CALLS, "status_label": "status_code",
                  "pod_label": PUSHED_POD, "namespace_label": PUSHED_NAMESPACE},
    PROMQL: {"metric": "", "status_label": "status", "pod_label": "pod", "namespace_label": "namespace"},
}


@dataclass(frozen=True)
class RequestSignal:
    kind: str = EXPOSITION
    metric: str = HISTOGRAM_COUNT
    status_label: str = "http_response_status_code"
    pod_label: str = "pod"
    namespace_label: str = "namespace"
    query: str = ""  # kind promql: the template
    probe_marked: bool = False  # the app marks the probe's requests on the metric (faultkit_origin)

    def promql(self, namespace: str, pods: list[str]) -> str:
        """The instant query giving each pod's cumulative requests by status."""
        regex = "|".join(_quoted(p) for p in pods)
        if self.kind == PROMQL:
            return self.query.replace("$namespace", _quoted(namespace)).replace("$pods", regex)
        where = f'{self.namespace_label}="{_quoted(namespace)}",{self.pod_label}=~"{regex}",{PROBE_MATCHER}'
        if self.kind == SPANMETRICS:
            where += ',span_kind="SPAN_KIND_SERVER"'
        by = f"sum by ({self.pod_label}, {self.status_label})"
        query = f"{by} ({self.metric}{{{where}}})"
        if self.kind == EXPOSITION:
            # or, where no pod's series was scraped, the same histogram pushed over OTLP through a
            # collector, whose pod and namespace are the SDK's resource attributes
            pushed = f'{PUSHED_NAMESPACE}="{_quoted(namespace)}",{PUSHED_POD}=~"{regex}",{PROBE_MATCHER}'
            query += (f' or {by} (label_replace({self.metric}{{{pushed}}}, "{self.pod_label}", "$1", '
                      f'"{PUSHED_POD}", "(.*)"))')
        return query

    def status_of(self, labels: dict[str, str]) -> str:
        """The status a sample counts under: its status code, or for spanmetrics 500 or 200."""
        value = labels.get(self.status_label, "unknown")
        if self.kind == SPANMETRICS:
            return ERROR_STATUS if value == "STATUS_CODE_ERROR" else OK_STATUS
        return value


@dataclass(frozen=True)
class TraceSignal:
    jaeger: str = ""  # a Jaeger query URL ("": none declared)


@dataclass(frozen=True)
class Signals:
    requests: RequestSignal = field(default_factory=RequestSignal)
    traces: TraceSignal = field(default_factory=TraceSignal)


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def signals_from_data(d: dict[str, Any] | None) -> Signals:
    """The Signals of a descriptor's `signals:` section (already checked by the app schema)."""
    d = d or {}
    r = d.get("requests") or {}
    kind = r.get("kind", EXPOSITION)
    values = {**_DEFAULTS[kind], **{k: str(v) for k, v in r.items() if k not in ("kind", "probe_marked")}}
    requests = RequestSignal(kind=kind, probe_marked=r.get("probe_marked") is True, **values)
    return Signals(requests=requests, traces=TraceSignal(jaeger=str((d.get("traces") or {}).get("jaeger", ""))))
