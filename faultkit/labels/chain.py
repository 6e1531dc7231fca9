"""The causal chain cause -> propagation -> impact, each step with its checkpoints.

- cause: the target service and the artifact the fault changes, with what moved at the target;
- propagation: the services on the descriptor's dependency graph between the target and the entry
  service (callers of the target that the entry reaches) whose error rate or latency rose in every
  counted cycle, nearest the target first;
- impact: the entry service and the symptom probe.
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


def _service_checkpoints(service: str, evidence: dict[str, list[dict[str, Any]]],
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
    return out


def rose(service: str, evidence: dict[str, list[dict[str, Any]]]) -> bool:
    """The service's error rate rose in every counted cycle (latency is sampled only at the probe)."""
    return any(
        s["service"] == service and s["metric"] == REQUESTS_SERIES and s["status"] == "5xx"
        and s["direction"] == "up"
        for s in evidence["metrics"]
    )


def causal_chain(entry: dict[str, Any], app: AppDescriptor, cycles: list[Cycle],
                 evidence: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    target, front = entry["target"]["service"], app.entry
    route = probe_route(entry)
    cause = {
        "role": "cause",
        "service": target,
        "artifact": {"kind": entry["artifact"]["kind"], "ref": entry["artifact"]["ref"]},
        "mechanism": entry["mechanism"],
        "checkpoints": _service_checkpoints(target, evidence),
    }
    steps = [cause]
    for service in between(app, target, front):
        if rose(service, evidence):
            steps.append({"role": "propagation", "service": service,
                          "checkpoints": _service_checkpoints(service, evidence)})
    impact_points = [] if target == front else _service_checkpoints(front, evidence)
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
