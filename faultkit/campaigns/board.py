"""What a running campaign shows: per worker its fault and stage, the counts, and the ETA.

Plain data behind a lock, written by the worker threads and read by the live view (view.py). The
ETA uses this campaign's measured wall time per mechanism once a fault of that mechanism is done,
and the plan's expectation before that.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field

from faultkit.campaigns.plan import Plan, PlannedFault


@dataclass
class WorkerView:
    fault: str | None = None
    stage: str = "idle"
    since: float = 0.0  # when the stage began
    window_s: float | None = None  # when the stage is a window: its length, for the countdown
    started: float = 0.0  # when the fault began


@dataclass
class Board:
    plan: Plan
    done: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    workers: dict[int, WorkerView] = field(default_factory=dict)
    walls: dict[str, list[float]] = field(default_factory=dict)  # per mechanism, this campaign's runs
    remaining: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def worker(self, k: int, fault: str | None, stage: str, window_s: float | None = None) -> None:
        with self.lock:
            view = self.workers.setdefault(k, WorkerView())
            now = time.time()
            if fault != view.fault:
                view.started = now
            if stage != view.stage or fault != view.fault:
                view.since = now
            view.fault, view.stage, view.window_s = fault, stage, window_s

    def finished(self, fault: PlannedFault, outcome: str, wall_s: float, final: bool) -> None:
        with self.lock:
            self.walls.setdefault(fault.mechanism, []).append(wall_s)
            if final:
                self.done += 1
                self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
                self.remaining.discard(fault.id)

    def event(self, text: str) -> None:
        with self.lock:
            self.events.append(f"{time.strftime('%H:%M:%S')} {text}")
            del self.events[:-8]

    def expected_s(self, fault: PlannedFault) -> float:
        measured = self.walls.get(fault.mechanism)
        return statistics.median(measured) if measured else fault.expected_s

    def eta_s(self) -> float:
        """Seconds until the queue is empty, if the workers share what remains evenly."""
        with self.lock:
            by_id = {f.id: f for f in self.plan.faults}
            running = {v.fault: v for v in self.workers.values() if v.fault}
            left = 0.0
            now = time.time()
            for fid in self.remaining:
                f = by_id[fid]
                v = running.get(fid)
                left += max(0.0, self.expected_s(f) - (now - v.started)) if v else self.expected_s(f)
            return left / max(1, self.plan.workers)
