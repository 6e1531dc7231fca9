"""A campaign's summary, from its folder alone: outcomes per category and mechanism, failed rules
by count, per-fault and total wall time. Written to DIR/summary.json at the end of every session.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from faultkit.campaigns.plan import Plan
from faultkit.campaigns.state import VERDICTS, FaultStore
from faultkit.yamlio import atomic_write

SUMMARY = "summary.json"
# every outcome that is not a verdict on the fault is an error of the campaign
OUTCOMES = ("admitted", "rejected", "flaky", "errors")


def bucket(outcome: str | None) -> str:
    return outcome if outcome in VERDICTS else "errors"


def summarize(folder: Path, plan: Plan) -> dict[str, Any]:
    states = FaultStore(folder).all(tuple(f.id for f in plan.faults))
    by_id = {f.id: f for f in plan.faults}
    done = [s for s in states if s.state == "done"]
    totals = Counter(bucket(s.outcome) for s in done)
    groups: dict[str, dict[str, dict[str, int]]] = {"category": {}, "mechanism": {}}
    for s in done:
        f = by_id[s.id]
        for key, value in (("category", f.category), ("mechanism", f.mechanism)):
            row = groups[key].setdefault(value, dict.fromkeys(OUTCOMES, 0))
            row[bucket(s.outcome)] += 1
    failed: Counter[str] = Counter()
    for s in done:
        failed.update(set((s.verdict or {}).get("failed_rules") or []))
    sessions_path = folder / "sessions.json"
    sessions = json.loads(sessions_path.read_text("utf-8")) if sessions_path.exists() else []
    return {
        "app": plan.app,
        "faults": len(plan.faults),
        "done": len(done),
        "remaining": len(states) - len(done),
        **{k: totals.get(k, 0) for k in OUTCOMES},
        "errors_by_outcome": dict(sorted(Counter(s.outcome or "" for s in done if bucket(s.outcome) == "errors")
                                         .items())),
        "per_category": dict(sorted(groups["category"].items())),
        "per_mechanism": dict(sorted(groups["mechanism"].items())),
        "failed_rules": dict(sorted(failed.items(), key=lambda kv: (-kv[1], kv[0]))),
        "per_fault": [{"fault": s.id, "mechanism": by_id[s.id].mechanism, "outcome": s.outcome, "state": s.state,
                       "wall_s": s.wall_s, "attempts": [a.outcome for a in s.attempts], "bundle": s.bundle}
                      for s in states],
        "total_wall_s": round(sum(max(0.0, x.get("last", x["started"]) - x["started"]) for x in sessions), 1),
        "sessions": len(sessions),
        "workers": plan.workers,
    }


def write(folder: Path, summary: dict[str, Any]) -> None:
    atomic_write(folder / SUMMARY, json.dumps(summary, indent=1, sort_keys=True) + "\n")
