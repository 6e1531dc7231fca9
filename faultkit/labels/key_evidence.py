"""Key evidence by modality: what moved between each counted cycle's before and after window.

A series moved when it moved the same way in EVERY counted cycle, by at least a factor of two and
by at least the screening threshold's worth (4 per minute; 100 ms for latency), so one noisy
sample cannot make key evidence. Log templates and events (restarts, OOM kills, readiness) are
listed when they occurred in an after window, with the cycles they occurred in. Alerts of the app's
pack (bundles of `validate --alerts` only) are listed when one fired in an after window and not in
its before window, with the cycles it was raised in. Spans (bundles of `validate --jaeger` only) give
operations whose error spans per minute or p95 latency moved in every counted cycle, by the same
margins, and the failing requests' paths that no before window showed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from faultkit.labels import measure as m
from faultkit.labels.legacy_counter import REQUESTS_SERIES
from faultkit.validators import screening as sc
from faultkit.validators.alert_rule import raised

MIN_RATE_CHANGE = sc.ERRORS_PER_MIN  # per minute
MIN_LATENCY_CHANGE_MS = 100.0
FACTOR = 2.0


@dataclass(frozen=True)
class Cycle:
    index: int
    before: m.Window
    after: m.Window


def counted_cycles(stages: dict[str, Any], windows: dict[str, m.Window]) -> list[Cycle]:
    out = []
    for c in stages.get("cycles", []):
        before, after = windows.get(c.get("before") or ""), windows.get(c.get("after") or "")
        if c.get("counted") and before and after:
            out.append(Cycle(c["index"], before, after))
    return out


def moved(pairs: list[tuple[float, float]], min_change: float) -> str | None:
    """'up' or 'down' when every (before, after) pair moved that way enough, else None."""
    if not pairs:
        return None
    if all(a - b >= min_change and a >= FACTOR * b for b, a in pairs):
        return "up"
    if all(b - a >= min_change and a * FACTOR <= b for b, a in pairs):
        return "down"
    return None


def _series(name: str, labels: dict[str, str], unit: str, pairs: list[tuple[int, float, float]],
            direction: str) -> dict[str, Any]:
    return {
        "metric": name,
        **labels,
        "unit": unit,
        "direction": direction,
        "cycles": [{"cycle": i, "before": b, "after": a, "change": round(a - b, 3)} for i, b, a in pairs],
    }


def metric_evidence(cycles: list[Cycle], probe_route: str, entry_service: str, version: int = 3,
                    probe_service: str | None = None) -> list[dict[str, Any]]:
    """Request-counter series per service and status class, counted as the bundle's rules `version`
    count them, and the symptom probe's latency."""
    out = []
    # each counted as the bundle's rules count it (v4: the probe's own requests left out)
    rates: tuple[tuple[str, Callable[[m.Window, str], float]], ...] = (
        ("5xx", lambda w, s: m.error_rate(w, s, version)),
        ("non-5xx", lambda w, s: m.ok_rate(w, s, version, probe_service)))
    names = sorted({s for c in cycles for w in (c.before, c.after) for s in m.services(w)})
    for service in names:
        if not all(m.has_requests(c.after, service) for c in cycles):
            continue
        for status, fn in rates:
            pairs = [(c.index, fn(c.before, service), fn(c.after, service)) for c in cycles]
            direction = moved([(b, a) for _, b, a in pairs], MIN_RATE_CHANGE)
            if direction:
                labels = {"service": service, "status": status}
                out.append(_series(REQUESTS_SERIES, labels, "1/min", pairs, direction))
    latency = [(c.index, m.probe_latency_ms(c.before), m.probe_latency_ms(c.after)) for c in cycles]
    if latency and all(b is not None and a is not None for _, b, a in latency):
        pairs = [(i, float(b or 0.0), float(a or 0.0)) for i, b, a in latency]
        direction = moved([(b, a) for _, b, a in pairs], MIN_LATENCY_CHANGE_MS)
        if direction:
            labels = {"service": entry_service, "route": probe_route}
            out.append(_series("probe_latency_ms", labels, "ms", pairs, direction))
    return out


def log_evidence(cycles: list[Cycle], version: int = 3) -> list[dict[str, Any]]:
    """New ERROR templates (absent from the cycle's before window, masked as rules `version` mask
    them, as the verdict counted them) with their rate per minute."""
    per_cycle = [(c.index, m.new_templates(c.before, c.after, version)) for c in cycles]
    keys = sorted({k for _, found in per_cycle for k in found})
    return [
        {
            "service": service,
            "template": template,
            "unit": "1/min",
            "cycles": [{"cycle": i, "per_min": found.get((service, template), 0.0)} for i, found in per_cycle],
        }
        for service, template in keys
    ]


def event_evidence(cycles: list[Cycle]) -> list[dict[str, Any]]:
    """Restarts, OOM kills and readiness losses in the after windows, per service."""
    out = []
    names = sorted({s for c in cycles for s in m.services(c.after)})
    for service in names:
        counts: dict[str, list[tuple[int, int, int]]] = {"restart": [], "oom-kill": [], "unready": []}
        for c in cycles:
            r, o = m.restarts(c.after, service)
            rb, ob = m.restarts(c.before, service)
            counts["restart"].append((c.index, rb, r))
            counts["oom-kill"].append((c.index, ob, o))
            counts["unready"].append((c.index, m.unready(c.before, service), m.unready(c.after, service)))
        for kind, rows in counts.items():
            if any(n > b for _, b, n in rows):
                out.append({"service": service, "kind": kind,
                            "cycles": [{"cycle": i, "before": b, "count": n} for i, b, n in rows]})
    return out


def alert_evidence(cycles: list[Cycle]) -> list[dict[str, Any]] | None:
    """Every alert raised in a counted cycle (firing after, not before), with the cycles it was raised
    in; None when a window recorded no alerts (a bundle made without `--alerts`)."""
    if not cycles or not all("alerts" in w for c in cycles for w in (c.before, c.after)):
        return None
    per_cycle = [(c.index, set(raised(c.before, c.after))) for c in cycles]
    names = sorted(set().union(*(found for _, found in per_cycle)))
    return [{"alert": name, "cycles": [i for i, found in per_cycle if name in found]} for name in names]


def trace_evidence(cycles: list[Cycle]) -> dict[str, list[dict[str, Any]]] | None:
    """Operations whose error spans per minute or p95 latency moved in every counted cycle, and the
    failing paths new in each cycle's after window; None unless every counted window holds a trace
    summary (a bundle made without `--jaeger`, or a window Jaeger could not answer for)."""
    summaries: list[tuple[Cycle, Any, Any]] = [(c, c.before.get("traces"), c.after.get("traces")) for c in cycles]
    if not summaries or any(not b or not a or "error" in b or "error" in a for _, b, a in summaries):
        return None
    rows = [(c.index, c.before, c.after, _ops(b), _ops(a)) for c, b, a in summaries]
    keys = sorted({k for *_, after in rows for k in after})
    # a service read up to Jaeger's limit of traces has floors for counts: a rate of error spans moved
    # between floors is no measured change (its p95 latency, over the spans read, still is one)
    floors = {s for _, b, a in summaries for s in (*b.get("limited", ()), *a.get("limited", ()))}
    operations = []
    for key in keys:
        # an operation the before window did not run has no errors and no latency there yet
        errors = [(i, round(bo.get(key, {}).get("errors", 0) / sc.minutes(bw), 3),
                   round(ao.get(key, {}).get("errors", 0) / sc.minutes(aw), 3)) for i, bw, aw, bo, ao in rows]
        latency = [(i, bo[key]["p95_ms"], ao[key]["p95_ms"]) for i, _, _, bo, ao in rows if key in bo and key in ao]
        labels = dict(zip(("service", "operation", "kind"), key, strict=True))
        for name, unit, pairs, least in (("error_spans", "1/min", errors, MIN_RATE_CHANGE),
                                         ("span_p95_ms", "ms", latency, MIN_LATENCY_CHANGE_MS)):
            if name == "error_spans" and key[0] in floors:
                continue
            direction = moved([(b, a) for _, b, a in pairs], least) if len(pairs) == len(rows) else None
            if direction:
                operations.append(_series(name, labels, unit, pairs, direction))
    return {"operations": operations, "failing": _new_failing_paths(summaries)}


def _ops(summary: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(o["service"], o["operation"], o["kind"]): o for o in summary["operations"]}


def _new_failing_paths(summaries: list[tuple[Cycle, Any, Any]]) -> list[dict[str, Any]]:
    """Failing paths of the after windows that their cycle's before window did not show, with the
    failing traces of each cycle, the most frequent first."""
    per_cycle = []
    for c, before, after in summaries:
        old = {tuple(f["path"]) for f in before["failing"]}
        per_cycle.append((c.index, {tuple(f["path"]): f["traces"] for f in after["failing"]
                                    if tuple(f["path"]) not in old}))
    paths = {p for _, found in per_cycle for p in found}
    out = [{"path": list(p), "cycles": [{"cycle": i, "traces": found.get(p, 0)} for i, found in per_cycle]}
           for p in paths]
    return sorted(out, key=lambda f: (-sum(c["traces"] for c in f["cycles"]), f["path"]))


def key_evidence(cycles: list[Cycle], probe_route: str, entry_service: str, version: int = 3,
                 probe_service: str | None = None) -> dict[str, Any]:
    evidence: dict[str, Any] = {
        "metrics": metric_evidence(cycles, probe_route, entry_service, version, probe_service),
        "logs": log_evidence(cycles, version),
        "events": event_evidence(cycles),
    }
    alerts = alert_evidence(cycles)
    if alerts is not None:  # absent for bundles without alerts, so their labels keep their bytes
        evidence["alerts"] = alerts
    traces = trace_evidence(cycles)
    if traces is not None:  # likewise absent for bundles without spans
        evidence["traces"] = traces
    return evidence
