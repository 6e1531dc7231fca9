"""The records of one observation window, as its bundle file windows/<name>.json holds them.

The sampler (sampler.py) writes them; the screening rules and the judge read them back from the
bundle. TypedDicts, because they are the JSON itself: typing them must not change a byte of a
shipped bundle.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from faultkit.observe.alerts import WindowAlerts
from faultkit.observe.trace_window import TraceError, TraceSummary


class InstanceSample(TypedDict):
    service: str
    build: str
    ready: bool
    restarts: int
    oom_kills: int
    requests: dict[str, float] | None  # cumulative requests by status; None when /metrics did not answer


class ProbeResult(TypedDict):
    status: int | None
    ok: bool
    ms: int
    error: NotRequired[str]  # the request's exception class, when no response came
    slow: NotRequired[bool]  # the expected status, but slower than the probe's expect_latency_ms
    page: NotRequired[str]  # the expected status, but the page lacked its expect_text or showed an error_text
    # every request the attempt sent, setup steps first, by the status it got (None: no answer, and
    # the attempt stopped there): rules v4 take exactly these off the app's counted traffic
    statuses: NotRequired[list[int | None]]


class ProbeAttempt(TypedDict):
    """One symptom-probe attempt of a window (rules v3): when it started, what it got, how long it took."""

    t: float
    status: int | None
    ok: bool
    ms: int
    error: NotRequired[str]
    slow: NotRequired[bool]  # the expected status, but slower than the probe's expect_latency_ms
    page: NotRequired[str]  # the expected status, but the page lacked its expect_text or showed an error_text
    statuses: NotRequired[list[int | None]]  # as in ProbeResult (windows made since rules v4)


class Sample(TypedDict):
    t: float
    instances: dict[str, InstanceSample]  # by instance id, sorted
    probe: ProbeResult | None


class LogLine(TypedDict):
    ts: float
    service: str
    instance: str
    level: str
    message: str


class Point(TypedDict):
    """One step of a window's per-minute series, for plots (validators/screening.py makes them)."""

    t: float
    errors_per_min: float
    requests_per_min: float
    error_logs_per_min: float


class Window(TypedDict):
    """One observation window as its bundle file windows/<name>.json holds it."""

    name: str
    start: float
    end: float
    window_s: float
    interval_s: float
    samples: list[Sample]
    logs: list[LogLine]
    points: NotRequired[list[Point]]
    # rules v3: the probe runs on its own clock (sized by the window), not in the samples
    probe_period_s: NotRequired[float]
    probes: NotRequired[list[ProbeAttempt]]
    # rules v5: which source measured each figure, as the platform's signal_sources() said at the
    # window's end: {"requests": {"kind", "endpoint" or "query", "metric", "probe_counted" (PromQL)},
    # "logs": {"source", "format", ...}}
    sources: NotRequired[dict[str, dict[str, object]]]
    # the window's spans from Jaeger (trace_window.py), in runs given one (`validate --jaeger`), or
    # why they could not be read; evidence only: no rule reads it, so every verdict is as without it
    traces: NotRequired[TraceSummary | TraceError]
    # the alerts of the app's pack pending or firing during the window (alerts.py), in runs given a
    # Prometheus that evaluates it (`validate --alerts`); evidence only, as `traces` is
    alerts: NotRequired[WindowAlerts]
