"""What `schedule show` reports about a schedule document: counts, mix, concurrency, timeline."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from faultkit.schedules.generator import active_profile


@dataclass(frozen=True)
class Row:
    """One invocation of the timeline."""

    invocation: int
    t: int
    phase: str  # "injection" or "observation"
    injected: tuple[str, ...]  # categories injected just before it
    reverted: int
    active: tuple[str, ...]  # categories of the faults active during it, sorted


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    """Figures recomputed from the events, so a hand-edited file is reported as it is."""
    params, events = doc["params"], doc["events"]
    invocations = doc["stats"]["invocations"]
    profile = active_profile(events, invocations)
    injects = [e for e in events if e["op"] == "inject"]
    counts = Counter(e["category"] for e in injects)
    targets = doc["stats"]["target_shares"]
    mix = {}
    for c in sorted(set(targets) | set(counts)):
        share = counts[c] / len(injects) if injects else 0.0
        mix[c] = {"count": counts[c], "share": round(share, 4),
                  "target": round(targets.get(c, 0.0), 4),
                  "error_pp": round(100 * (share - targets.get(c, 0.0)), 2)}
    peak = max(profile, default=0)
    return {
        "app": doc["app"], "release": doc["release"], "seed": doc["seed"],
        "preset": params["preset"], "invocations": invocations, "interval_s": params["interval_s"],
        "injected": len(injects), "reverted": sum(e["op"] == "revert" for e in events),
        "skipped_draws": doc["stats"]["skipped_draws"],
        "mix": mix,
        "mix_mae_pp": round(sum(abs(m["error_pp"]) for m in mix.values()) / len(mix), 2) if mix else 0.0,
        "mean_active": round(sum(profile) / len(profile), 3) if profile else 0.0,
        "peak_active": peak, "peak_invocation": profile.index(peak) if profile else 0,
        "profile": profile,
    }


def timeline(doc: dict[str, Any]) -> list[Row]:
    """One row per invocation with what changed before it and what is active during it."""
    params, events = doc["params"], doc["events"]
    invocations = doc["stats"]["invocations"]
    injection_slots = round(params["injection_minutes"] * 60 / params["interval_s"])
    by_case = {e["case"]: e for e in events if e["op"] == "inject"}
    ends = {e["case"]: e["invocation"] for e in events if e["op"] == "revert"}
    rows = []
    for k in range(invocations):
        active = sorted(e["category"] for c, e in by_case.items()
                        if e["invocation"] <= k < ends.get(c, invocations))
        rows.append(Row(
            k, k * params["interval_s"], "injection" if k < injection_slots else "observation",
            tuple(e["category"] for e in events if e["op"] == "inject" and e["invocation"] == k),
            sum(e["op"] == "revert" and e["invocation"] == k for e in events), tuple(active)))
    return rows
