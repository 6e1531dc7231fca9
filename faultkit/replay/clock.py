"""The invocation clock. At each boundary: revert the faults due, inject the faults due, in the
schedule's order, each through its change value and the write-ahead journal, and wait until each
is in place. The invocation starts only then, and lasts the interval: a slow rollout delays the
clock, never the order, so every run makes the same changes in the same sequence.

During an invocation the entry service's traffic is sampled, every active fault's symptom probe
runs once (at its start, beside the --invoke command), and the command is held to its budget.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from faultkit.errors import PlatformError
from faultkit.observe.sampler import Sampler
from faultkit.observe.window import ProbeResult
from faultkit.platforms.base import Platform
from faultkit.replay.invoke import Invocation
from faultkit.replay.plan import SchedulePlan, Step
from faultkit.replay.record import RunRecord
from faultkit.replay.traffic import Traffic
from faultkit.validators.app_changes import Change, Check, change_for, deployed_build
from faultkit.validators.journal import Journal


@dataclass(frozen=True)
class ClockParams:
    interval_s: float
    invoke: tuple[str, ...] | None
    budget_s: float
    sample_s: float = 1.0
    rollout_timeout_s: float = 90.0


@dataclass(frozen=True)
class Active:
    change: Change
    index: int  # in the journal
    mechanism: str
    since: int  # invocation


@dataclass(frozen=True)
class Status:
    """What the live view shows."""

    invocation: int
    of: int
    phase: str
    active: tuple[str, ...]
    next_changes: tuple[str, ...]


@dataclass
class Clock:
    platform: Platform
    plan: SchedulePlan
    params: ClockParams
    record: RunRecord
    journal: Journal
    traffic: Traffic
    builds: dict[str, str]
    show: Callable[[Status], None]
    active: dict[str, Active] = field(default_factory=dict)
    probers: dict[str, Sampler] = field(default_factory=dict)
    pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(max_workers=8))
    current: int = 0

    def run(self) -> None:
        for k in range(self.plan.invocations):
            self.boundary(k)
            self.invocation(k)
        self.boundary(self.plan.invocations)  # reverts due at or after the end

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        for s in self.probers.values():
            s.close()

    def _status(self, phase: str) -> None:
        upcoming = self.plan.steps(self.current + 1)
        self.show(Status(self.current, self.plan.invocations, phase, tuple(sorted(self.active)),
                         tuple(f"{'+' if s.op == 'inject' else '-'}{s.fault}" for s in upcoming)))

    # -- boundaries ----------------------------------------------------------------------------
    def boundary(self, k: int) -> None:
        self.current = k
        steps = self.plan.steps(k)
        entry: dict[str, Any] = {"invocation": k, "boundary": round(time.time(), 3), "changes": len(steps)}
        self.record.invocations.append(entry)
        for step in steps:
            self._status(f"{step.op} {step.fault}")
            self.revert(step) if step.op == "revert" else self.inject(step)
            self.record.save()
        entry["ready"] = round(time.time(), 3)
        self.record.save()

    def _wait(self, check: Callable[[], Check], what: str) -> Check:
        deadline = time.monotonic() + self.params.rollout_timeout_s
        while True:
            result = check()
            if result.ok:
                return result
            if time.monotonic() > deadline:
                raise PlatformError(f"{what}: not in place after {self.params.rollout_timeout_s:g}s "
                                    f"({result.detail}: {result.measured}); every active fault was reverted")
            time.sleep(0.25)

    def inject(self, step: Step) -> None:
        entry = self.plan.entries[step.fault]
        undo_build = deployed_build(self.platform, entry.target.service) if entry.code else None
        change = change_for(entry, build=self.builds.get(step.fault), undo_build=undo_build,
                            timeout_s=self.params.rollout_timeout_s)
        row: dict[str, Any] = {"invocation": step.invocation, "op": "inject", "fault": step.fault, "case": step.case,
                               "mechanism": entry.mechanism, "start": round(time.time(), 3), "done": None,
                               "ok": False}
        self.record.changes.append(row)
        index = self.journal.record(change)  # before the change reaches the application
        applied = change.apply(self.platform)
        self.journal.mark(index, "applied", applied)
        self.active[step.fault] = Active(applied, index, entry.mechanism, step.invocation)
        check = self._wait(lambda: applied.in_place(self.platform), f"{step.fault} at invocation {step.invocation}")
        row.update(done=round(time.time(), 3), ok=True, check=check.record())

    def revert(self, step: Step, why: str | None = None) -> None:
        row: dict[str, Any] = {"invocation": step.invocation, "op": "revert", "fault": step.fault, "case": step.case,
                               "start": round(time.time(), 3), "done": None, "ok": False}
        if why:
            row["why"] = why
        self.record.changes.append(row)
        active = self.active.get(step.fault)
        if active is None:
            row.update(mechanism=self.plan.entries[step.fault].mechanism, detail="was not active")
            return
        row["mechanism"] = active.mechanism
        active.change.undo(self.platform)
        self.journal.mark(active.index, "undone")
        del self.active[step.fault]
        check = self._wait(lambda: active.change.undone(self.platform), f"reverting {step.fault}")
        row.update(done=round(time.time(), 3), ok=True, check=check.record(), detail=active.change.describe())

    def revert_all(self, why: str) -> None:
        """Revert every active fault, newest first (the interrupted or failed run's end)."""
        for fault in sorted(self.active, key=lambda f: self.active[f].index, reverse=True):
            case = next((e["case"] for e in self.plan.doc["events"] if e["fault"] == fault), 0)
            self.revert(Step(self.current, "revert", fault, case), why)
        self.record.save()

    # -- invocations ---------------------------------------------------------------------------
    def _probe(self, fault: str) -> Future[ProbeResult] | None:
        entry = self.plan.entries[fault]
        if entry.probe is None:
            return None
        if fault not in self.probers:
            self.probers[fault] = Sampler(self.platform, (), entry.probe)
        return self.pool.submit(self.probers[fault].run_probe)

    def invocation(self, k: int) -> None:
        start = time.time()
        end = start + self.params.interval_s
        entry = self.record.invocations[-1]
        entry["start"] = round(start, 3)
        probes = {f: self._probe(f) for f in sorted(self.active)}
        command = None
        if self.params.invoke:
            command = Invocation.start(list(self.params.invoke), k, self.record.workspace, self.record.log(k),
                                       self.params.budget_s, dict(os.environ))
        samples = self.record.traffic["samples"]
        try:
            while True:
                samples.append(self.traffic.sample())
                self._status("running")
                done = command.poll() if command else True
                now = time.time()
                if now >= end and done:
                    break
                time.sleep(max(0.0, min(self.params.sample_s, end - now) if now < end else 0.1))
        finally:
            if command:
                if not command.poll():
                    command.kill()  # interrupted mid-invocation
                entry["invoke"] = command.result()
        for fault, future in probes.items():
            if future is not None:
                result = future.result()
                self.record.probes.append({"invocation": k, "fault": fault, "result": result})
        entry["end"] = round(time.time(), 3)
        self.record.save()
