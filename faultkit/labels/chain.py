"""The causal chain cause -> propagation -> impact, each step with its checkpoints.

From the descriptor's dependency graph (bundles without spans, or spans that showed nothing):
- cause: the target service and the artifact the fault changes, with what moved at the target;
- propagation: the services on the graph between the target and the entry service (callers of the
  target that the entry reaches) whose error rate rose in every counted cycle, nearest the target first;
- impact: the entry service and the symptom probe.

From observed call paths (bundles of `validate --jaeger` whose spans moved, issue 31): the cause is
the deepest service of the most frequent failing path no before window showed, or, when no request
failed, the service furthest from the entry along observed calls whose operations slowed or failed
in every counted cycle; the propagation is its callers on that path, nearest first. The cause step
keeps the fault's artifact, and names the target when the spans surface the fault elsewhere (a
store that emits no spans is seen at its client).
"""

from __future__ import annotations

from typing import Any

from faultkit.apps.descriptor import AppDescriptor
from faultkit.labels import checkpoints as cp
from faultkit.labels import measure as m
from faultkit.labels.key_evidence import Cycle
from faultkit.labels.legacy_counter import REQUESTS_SERIES

# at most this many log-template checkpoints per step: the masked templates of one error often
# differ only in a word, and six near-copies would weigh more than the error rate they explain
MAX_TEMPLATES_PER_STEP = 2
MAX_OPERATIONS_PER_STEP = 4  # likewise for a service's operations whose spans moved


def between(app: AppDescriptor, target: str, entry: str) -> list[str]:
    """Services on a path entry -> ... -> target, excluding both ends, nearest the target first."""
    reach_target = set(app.scope(target))
    callees: dict[str, list[str]] = {}
    for a, b in app.edges:
        callees.setdefault(a, []).append(b)
    from_entry, todo = {entry}, [entry]
    while todo:
        for b in callees.get(todo.pop(), []):
            if b not in from_entry:
                from_entry.add(b)
                todo.append(b)
    distance, frontier, d = {target: 0}, [target], 0
    while frontier:
        d += 1
        frontier = sorted({c for s in frontier for c in app.callers(s) if c not in distance})
        distance.update(dict.fromkeys(frontier, d))
    on_path = (reach_target & from_entry) - {target, entry}
    return sorted(on_path, key=lambda s: (distance.get(s, 0), s))


def _service_checkpoints(service: str, evidence: dict[str, Any],
                         metrics: tuple[str, ...] = (REQUESTS_SERIES,)) -> list[dict[str, Any]]:
    out = []
    for series in evidence["metrics"]:
        if series["service"] == service and series["metric"] in metrics:
            found = cp.for_series(series)
            if found:
                out.append(found)
    templates = [t for t in (cp.for_template(i) for i in evidence["logs"] if i["service"] == service) if t]
    templates.sort(key=lambda c: (-min(o["after"] for o in c["observed"]), c["signal"]))
    out += templates[:MAX_TEMPLATES_PER_STEP]
    out += [e for e in (cp.for_event(i) for i in evidence["events"] if i["service"] == service) if e]
    spans = [c for c in (cp.for_series(o, "trace") for o in _moved_operations(evidence, service)) if c]
    return out + spans[:MAX_OPERATIONS_PER_STEP]


def _moved_operations(evidence: dict[str, Any], service: str | None = None) -> list[dict[str, Any]]:
    return [o for o in evidence.get("traces", {}).get("operations", []) if service in (None, o["service"])]


def rose(service: str, evidence: dict[str, Any]) -> bool:
    """The service's error rate, or one of its operations' error spans or latency, rose in every
    counted cycle."""
    return any(
        s["service"] == service and s["metric"] == REQUESTS_SERIES and s["status"] == "5xx"
        and s["direction"] == "up"
        for s in evidence["metrics"]
    ) or any(o["direction"] == "up" for o in _moved_operations(evidence, service))


def observed_path(app: AppDescriptor, cycles: list[Cycle], evidence: dict[str, Any]) \
        -> tuple[list[str], dict[str, Any] | None] | None:
    """(the cause and its callers up to the entry, entry excluded, cause first; the failing path
    they were read from, or None when read from slowed operations), or None when the spans showed
    nothing (or the bundle holds none)."""
    traces = evidence.get("traces")
    if not traces:
        return None
    if traces["failing"]:
        path = traces["failing"][0]
        services = [step.split(" ", 1)[0] for step in path["path"]]
        if app.entry in services:  # what ran before the entry (the load generator) is not the app's
            services = services[len(services) - 1 - services[::-1].index(app.entry):]
        return _callers_first(services, app.entry), path
    moved = {o["service"] for o in _moved_operations(evidence) if o["direction"] == "up"}
    parent = _observed_parents(app.entry, cycles)
    reached = [s for s in moved if s in parent]
    if not reached:
        return None
    depth = {s: len(_up(s, parent)) for s in reached}
    deepest = min(reached, key=lambda s: (-depth[s], s))
    return _callers_first(_up(deepest, parent)[::-1], app.entry), None


def _callers_first(services: list[str], entry: str) -> list[str]:
    """Services of a path root first, as the cause (the last) and its callers, each once, nearest
    first, the entry left out (it is the impact)."""
    out: list[str] = []
    for s in reversed(services):
        if s not in out and s != entry:
            out.append(s)
    return out or [entry]


def _observed_parents(entry: str, cycles: list[Cycle]) -> dict[str, str]:
    """Each service reached from the entry by the after windows' observed calls -> the caller that
    reaches it first (breadth first, callers in name order)."""
    callees: dict[str, set[str]] = {}
    for c in cycles:
        summary: Any = c.after.get("traces") or {}
        for call in summary.get("calls", []):
            callees.setdefault(call["caller"], set()).add(call["callee"])
    parent, frontier = {entry: ""}, [entry]
    while frontier:
        nxt = []
        for caller in frontier:
            for callee in sorted(callees.get(caller, ())):
                if callee not in parent:
                    parent[callee] = caller
                    nxt.append(callee)
        frontier = nxt
    return parent


def _up(service: str, parent: dict[str, str]) -> list[str]:
    """service, its caller, ... up to the entry."""
    out = [service]
    while parent[out[-1]]:
        out.append(parent[out[-1]])
    return out


def causal_chain(entry: dict[str, Any], app: AppDescriptor, cycles: list[Cycle],
                 evidence: dict[str, Any]) -> list[dict[str, Any]]:
    target, front = entry["target"]["service"], app.entry
    route = probe_route(entry)
    seen = observed_path(app, cycles, evidence)
    if seen is None:
        cause_service = target
        propagation = [s for s in between(app, target, front) if rose(s, evidence)]
    else:
        (cause_service, *propagation), _ = seen
    cause: dict[str, Any] = {
        "role": "cause",
        "service": cause_service,
        "artifact": {"kind": entry["artifact"]["kind"], "ref": entry["artifact"]["ref"]},
        "mechanism": entry["mechanism"],
        "checkpoints": _service_checkpoints(cause_service, evidence),
    }
    if cause_service != target:
        cause["target"] = target
    if seen is not None and seen[1] is not None:
        cause["path"] = seen[1]["path"]
        found = cp.for_failing_path(seen[1])
        cause["checkpoints"] += [found] if found else []
    steps = [cause]
    for service in propagation:
        steps.append({"role": "propagation", "service": service,
                      "checkpoints": _service_checkpoints(service, evidence)})
    impact_points = [] if cause_service == front else _service_checkpoints(front, evidence)
    latency = (cp.for_series(s) for s in evidence["metrics"] if s["metric"] == "probe_latency_ms")
    impact_points += [c for c in latency if c]
    failures = []
    for c in cycles:
        fb, _ = m.probe_failures(c.before)
        fa, na = m.probe_failures(c.after)
        failures.append((c.index, fb, fa, na))
    probe = cp.for_probe(route, failures)
    if probe:
        impact_points.append(probe)
    steps.append({"role": "impact", "service": front, "probe": route, "checkpoints": impact_points})
    return steps


def probe_route(entry: dict[str, Any]) -> str:
    return f"{entry['probe']['method']} {entry['probe']['path'].split('?')[0]}"
