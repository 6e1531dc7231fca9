"""The figures of a run, from its record's files alone: `schedule judge` recomputes them.

Degradation (the benchmark's figure of harm): the trapezoidal integral over the run of
min(1, e + l) * q, where, between two consecutive traffic samples of the entry service,
q is its request rate (requests/s), e the fraction of those requests answered with a status of
500 or more, and l the fraction slower than the latency threshold (`--latency-ms`, read from the
service's request-duration histogram at the smallest bucket bound at or above the threshold).
Each rate is placed at the end of its interval; the unit of the integral is degraded requests.

Masking: a fault whose symptom probe never failed while it was in place (a probe fails when its
status is not the expected one, or it took longer than the latency threshold) is masked; every
scheduled fault was admitted alone, so something active with it hid its symptom. The faults in
place at the same time are reported with it: the data for the entries' `masked_by`.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from faultkit.bundles import dumps, read_json, verify_bundle

FIGURES = "figures.json"


def _deltas(prev: dict[str, Any], cur: dict[str, Any]) -> tuple[float, float, float, float]:
    """(requests, errors, timed, slow) between two samples, summed over instances. An instance
    whose counters went down restarted: its counts since the restart are the delta."""
    total = errors = timed = slow = 0.0
    for iid, now in cur["instances"].items():
        before = prev["instances"].get(iid)
        if before is None or sum(now["requests"].values()) < sum(before["requests"].values()):
            before = {"requests": {}, "count": 0.0, "slow": 0.0}
        for status, n in now["requests"].items():
            d = n - before["requests"].get(status, 0.0)
            total += d
            if not status.isdigit() or int(status) >= 500:
                errors += d
        timed += max(0.0, now["count"] - before["count"])
        slow += max(0.0, now["slow"] - before["slow"])
    return total, errors, timed, slow


def degradation(samples: list[dict[str, Any]]) -> dict[str, Any]:
    points: list[tuple[float, float]] = []
    requests = errors = 0.0
    for prev, cur in zip(samples, samples[1:], strict=False):
        dt = cur["t"] - prev["t"]
        if dt <= 0:
            continue
        total, err, timed, slow = _deltas(prev, cur)
        requests += total
        errors += err
        e = err / total if total > 0 else 0.0
        lat = slow / timed if timed > 0 else 0.0
        points.append((cur["t"], min(1.0, e + lat) * total / dt))
    integral = sum((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in zip(points, points[1:], strict=False))
    return {"integral": round(integral, 6), "requests": round(requests, 3), "errors": round(errors, 3),
            "points": len(points)}


def _probe_failed(result: dict[str, Any], latency_ms: float) -> bool:
    return not result["ok"] or result["ms"] > latency_ms


def masking(changes: list[dict[str, Any]], probes: list[dict[str, Any]], latency_ms: float) -> dict[str, Any]:
    """Per fault: its probes while in place, how many failed, whether it is masked and by what."""
    spans: dict[str, list[tuple[int, int | None]]] = defaultdict(list)
    for c in changes:
        if c["op"] == "inject" and c["ok"]:
            spans[c["fault"]].append((c["invocation"], None))
        elif c["op"] == "revert" and spans.get(c["fault"]):
            start, _ = spans[c["fault"]][-1]
            spans[c["fault"]][-1] = (start, c["invocation"])

    def active(fault: str, k: int) -> bool:
        return any(s <= k and (e is None or k < e) for s, e in spans[fault])

    out: dict[str, Any] = {}
    for fault in sorted(spans):
        mine = [p for p in probes if p["fault"] == fault]
        failed = sum(_probe_failed(p["result"], latency_ms) for p in mine)
        invocations = sorted({p["invocation"] for p in mine})
        with_ = sorted({f for f in spans if f != fault for k in invocations if active(f, k)})
        out[fault] = {"probes": len(mine), "failed": failed, "masked": bool(mine) and failed == 0,
                      "active_with": with_}
    return out


def overhead(changes: list[dict[str, Any]], invocations: list[dict[str, Any]]) -> dict[str, Any]:
    """Seconds from each boundary until every change was in place, and per change by mechanism."""
    per_boundary = [round(i["ready"] - i["boundary"], 3) for i in invocations if "ready" in i]
    by: dict[str, list[float]] = defaultdict(list)
    for c in changes:
        if c.get("done") is not None:
            by[f"{c['op']} {c['mechanism']}"].append(c["done"] - c["start"])
    mech = {k: {"n": len(v), "mean_s": round(sum(v) / len(v), 3), "max_s": round(max(v), 3)}
            for k, v in sorted(by.items())}
    busy = [x for x, i in zip(per_boundary, invocations, strict=False) if i.get("changes")]
    return {"per_invocation_s": per_boundary, "by_mechanism": mech,
            "mean_with_changes_s": round(sum(busy) / len(busy), 3) if busy else 0.0}


def compute(folder: Path) -> dict[str, Any]:
    """Every figure of the run, from its files."""
    run = read_json(folder, "run.json")
    changes = read_json(folder, "changes.json")
    invocations = read_json(folder, "invocations.json")
    traffic = read_json(folder, "traffic.json")
    probes = read_json(folder, "probes.json")
    latency_ms = float(run["params"]["latency_ms"])
    masks = masking(changes, probes, latency_ms)
    left = sorted({c["fault"] for c in changes if c["op"] == "inject" and c["ok"]}
                  - {c["fault"] for c in changes if c["op"] == "revert" and c["ok"]})
    return {
        "schedule": run["schedule"], "run": run["run"], "latency_ms": latency_ms,
        "latency_bucket_s": traffic["bucket_s"], "entry": traffic["service"],
        "degradation": degradation(traffic["samples"]),
        "faults": masks,
        "masked": [{"fault": f, "active_with": m["active_with"]} for f, m in masks.items() if m["masked"]],
        "overhead": overhead(changes, invocations),
        "injections": [[c["invocation"], c["fault"]] for c in changes if c["op"] == "inject"],
        "left_active": left,
        "aborted": run.get("aborted"),
    }


def judge_run(folder: Path) -> tuple[dict[str, Any], bool]:
    """Verify the seal, recompute the figures, and say whether they match the recorded ones byte for byte."""
    verify_bundle(folder)
    figures = compute(folder)
    recorded = (folder / FIGURES).read_text("utf-8") if (folder / FIGURES).is_file() else ""
    return figures, dumps(figures) == recorded
