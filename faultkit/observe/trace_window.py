"""One window's spans summed up as its bundle file windows/<name>.json holds them (`traces`, issue 31).

Per operation (service, operation, span kind) the spans, the failed ones and the latency; per call
from one service into another (a span whose parent is in another service) the calls and the failed
ones; and the failing requests' paths: for each trace with a failed span, the steps from its root
down to its deepest failed span, each step "service operation", counted per distinct path.

Only spans of the app's observed services are counted; a failing path still starts at its trace's
root, which may be the load generator's. The summary is plain JSON in a fixed order with rounded
figures, so the same spans give the same bytes. No screening rule reads it yet: the judge and every
verdict are what they were without it.

Jaeger answers a query with at most a limit of traces (jaeger.TRACE_LIMIT, the newest first), so a
busy service's window may be read in part: a service with that many traces in the read is named in
`limited`, and its figures are a floor, not a count.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import NotRequired, TypedDict

from faultkit.observe.jaeger import TRACE_LIMIT, Span

TOP_PATHS = 10  # distinct failing paths kept per window, the most frequent first


class OperationFigures(TypedDict):
    service: str
    operation: str
    kind: str  # "server", "client", "internal", ... or "" when the span did not say
    spans: int
    errors: int
    p50_ms: float
    p95_ms: float
    max_ms: float


class CallFigures(TypedDict):
    caller: str
    callee: str
    calls: int
    errors: int  # calls whose span in the callee failed


class FailingPath(TypedDict):
    path: list[str]  # "service operation" steps, from the trace's root to its deepest failed span
    traces: int


class TraceSummary(TypedDict):
    traces: int  # traces with a span of the observed services
    spans: int
    error_spans: int
    failing_traces: int  # traces with a failed span of the observed services
    operations: list[OperationFigures]  # by service, operation, kind
    calls: list[CallFigures]  # by caller, callee
    failing: list[FailingPath]  # the TOP_PATHS most frequent paths, then by path
    scope: NotRequired[dict[str, str]]  # the resource attributes the spans were read for (the instance's)
    limited: NotRequired[list[str]]  # services read up to Jaeger's limit of traces: their figures are floors


class TraceError(TypedDict):
    error: str  # why the window has no summary: one line


def summarize(spans: Iterable[Span], services: Iterable[str], limit: int = TRACE_LIMIT) -> TraceSummary:
    """The summary of one window's spans, counting those of `services` only; `limit` is the most
    traces the read asked Jaeger for per service."""
    everything = list(spans)
    wanted = set(services)
    ours = [s for s in everything if s.service in wanted]
    by_id = {(s.trace_id, s.span_id): s for s in everything}
    failing = Counter(_path(deepest, by_id) for deepest in _deepest_failures(ours, by_id))
    top = sorted(failing.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_PATHS]
    summary: TraceSummary = {
        "traces": len({s.trace_id for s in ours}),
        "spans": len(ours),
        "error_spans": sum(s.error for s in ours),
        "failing_traces": sum(failing.values()),
        "operations": _operations(ours),
        "calls": _calls(ours, by_id),
        "failing": [{"path": list(path), "traces": n} for path, n in top],
    }
    traces_of: dict[str, set[str]] = defaultdict(set)
    for s in ours:
        traces_of[s.service].add(s.trace_id)
    # a query for the service answered with the limit gives at least that many of its traces
    if limited := sorted(service for service, ids in traces_of.items() if len(ids) >= limit):
        summary["limited"] = limited
    return summary


def _operations(spans: list[Span]) -> list[OperationFigures]:
    groups: dict[tuple[str, str, str], list[Span]] = defaultdict(list)
    for s in spans:
        groups[(s.service, s.operation, s.kind)].append(s)
    out: list[OperationFigures] = []
    for (service, operation, kind), group in sorted(groups.items()):
        ms = sorted(s.duration_us / 1000 for s in group)
        out.append({"service": service, "operation": operation, "kind": kind, "spans": len(group),
                    "errors": sum(s.error for s in group), "p50_ms": _rank(ms, 0.50), "p95_ms": _rank(ms, 0.95),
                    "max_ms": round(ms[-1], 3)})
    return out


def _rank(ordered: list[float], q: float) -> float:
    """The nearest-rank percentile: a duration some span took, never one between two spans."""
    return round(ordered[max(0, math.ceil(q * len(ordered)) - 1)], 3)


def _calls(spans: list[Span], by_id: dict[tuple[str, str], Span]) -> list[CallFigures]:
    calls: Counter[tuple[str, str]] = Counter()
    errors: Counter[tuple[str, str]] = Counter()
    for s in spans:
        parent = by_id.get((s.trace_id, s.parent_id))
        if parent is not None and parent.service != s.service:
            calls[(parent.service, s.service)] += 1
            errors[(parent.service, s.service)] += s.error
    return [{"caller": caller, "callee": callee, "calls": n, "errors": errors[(caller, callee)]}
            for (caller, callee), n in sorted(calls.items())]


def _deepest_failures(spans: list[Span], by_id: dict[tuple[str, str], Span]) -> list[Span]:
    """Per trace, its deepest failed span (the earliest started of equally deep ones)."""
    deepest: dict[str, tuple[int, int, str, Span]] = {}
    for s in spans:
        if not s.error:
            continue
        key = (-len(_ancestry(s, by_id)), s.start_us, s.span_id, s)
        if s.trace_id not in deepest or key[:3] < deepest[s.trace_id][:3]:
            deepest[s.trace_id] = key
    return [deepest[trace][3] for trace in sorted(deepest)]


def _ancestry(span: Span, by_id: dict[tuple[str, str], Span]) -> list[Span]:
    """The span and its ancestors found in the window, root first (a parent Jaeger did not return
    ends the chain there; a cycle, which only bad data makes, too)."""
    chain, seen = [span], {span.span_id}
    while (parent := by_id.get((span.trace_id, chain[-1].parent_id))) is not None and parent.span_id not in seen:
        chain.append(parent)
        seen.add(parent.span_id)
    return chain[::-1]


def _path(span: Span, by_id: dict[tuple[str, str], Span]) -> tuple[str, ...]:
    return tuple(f"{s.service} {s.operation}" for s in _ancestry(span, by_id))
