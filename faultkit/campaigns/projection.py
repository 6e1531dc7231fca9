"""Expected wall time of a campaign before it runs, to size a cluster for a catalog.

Per fault: the protocol's windows for its mechanism times the window, plus measured setup and
change times (timing.py). The faults go to the workers longest first, each to the worker free
soonest (what the shared queue does), after every instance is brought up once.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass

from faultkit.campaigns.timing import MECHANISMS, Overheads, windows


@dataclass(frozen=True)
class Projection:
    workers: int
    window_s: float
    repeat: int
    counts: dict[str, int]
    windows: dict[str, int]
    per_fault_s: dict[str, float]
    serial_s: float
    wall_s: float
    overheads: Overheads

    @property
    def faults(self) -> int:
        return sum(self.counts.values())

    @property
    def faults_per_hour(self) -> float:
        return round(self.faults / (self.wall_s / 3600), 2) if self.wall_s else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"workers": self.workers, "window_s": self.window_s, "repeat": self.repeat, "faults": self.faults,
                "counts": self.counts, "windows_per_fault": self.windows, "per_fault_s": self.per_fault_s,
                "serial_s": self.serial_s, "wall_s": self.wall_s, "wall_h": round(self.wall_s / 3600, 2),
                "faults_per_hour": self.faults_per_hour, "overheads": self.overheads.as_dict()}


def scale(mix: dict[str, int], total: int) -> dict[str, int]:
    """The mix scaled to `total` faults (largest remainders), keeping the catalog's proportions."""
    have = sum(mix.values())
    if not have:
        return {"code": total} if total else {}
    exact = {m: mix.get(m, 0) * total / have for m in MECHANISMS}
    out = {m: int(v) for m, v in exact.items()}
    for m in sorted(exact, key=lambda m: (-(exact[m] - out[m]), m))[: total - sum(out.values())]:
        out[m] += 1
    return out


def makespan(durations: list[float], workers: int) -> float:
    free = [0.0] * max(1, workers)
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(free, free[0] + d)
    return max(free)


def project(mix: Counter[str] | dict[str, int], overheads: Overheads, window_s: float, repeat: int, workers: int,
            total: int | None = None) -> Projection:
    counts = scale(dict(mix), total) if total is not None else {m: int(mix.get(m, 0)) for m in MECHANISMS}
    per = {m: round(overheads.expected_s(m, window_s, repeat), 1) for m in MECHANISMS}
    durations = [per[m] for m in MECHANISMS for _ in range(counts.get(m, 0))]
    wall = overheads.instance_up_s + makespan(durations, workers) if durations else 0.0
    return Projection(workers, window_s, repeat, {m: counts.get(m, 0) for m in MECHANISMS},
                      {m: windows(m, repeat) for m in MECHANISMS}, per, round(sum(durations), 1), round(wall, 1),
                      overheads)
