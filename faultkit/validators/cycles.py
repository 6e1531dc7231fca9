"""The observed cycles: before window, inject, after window, revert, recovery window.

Every cycle has a before window of its own, taken after the previous recovery window: a symptom
still fading early in a recovery window (a caller's timeout outliving the revert) is judged by the
recovery rules, and must not count against the next injection's baseline. Config faults run one
uncounted cycle first (change, restore) and count only the later ones, as the protocol asks.

Every change goes through the write-ahead journal before it reaches the application.

Given a Jaeger, each window file is written as it ends and written again with its `traces` once
its spans are read (trace_reader.py, in the background): only the last window's read is waited
for, once a run ends; a run cut short records the reads still pending as not read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from faultkit.catalog.model import Entry
from faultkit.catalog.vocab import ACTIONS
from faultkit.errors import NotReady, PlatformError
from faultkit.observe.load import Limits, Overloaded, cores, over_limits
from faultkit.observe.sampler import Sampler, WindowSpec
from faultkit.observe.trace_reader import UNREAD
from faultkit.observe.window import Sample, Window
from faultkit.platforms.base import Platform
from faultkit.validators import screening
from faultkit.validators.app_changes import Change
from faultkit.validators.journal import Journal, recover
from faultkit.validators.params import ValidationParams
from faultkit.validators.records import CheckRecord, CycleRecord
from faultkit.validators.sites import SiteSamplers
from faultkit.validators.stagelog import StageLog


def plan(entry: Entry, repeat: int) -> list[tuple[int, bool]]:
    """(index, counted) of every cycle: config faults start with an uncounted cycle 0."""
    first = 0 if entry.config else 1
    return [(k, k > 0) for k in range(first, repeat + 1)]



def own_runnable(entry: Entry, replicas: Callable[[], int]) -> int:
    """Runnable tasks the fault itself adds to the machine: a cpu-stress's busy loops, on each
    replica. The load average counts them even while their container's CPU limit throttles them to
    its quota, so a stress of many workers on a small machine read as a saturated one and could
    never be judged (50 workers on 2 cores: 25 per core against a limit of 8)."""
    if entry.direct is None or entry.direct.action != "cpu-stress":
        return 0
    workers = next(p for p in ACTIONS["cpu-stress"].params if p.name == "workers")
    return int(entry.direct.params.get("workers", workers.default)) * max(replicas(), 1)


def allowing(limits: Limits, runnable: int) -> Limits:
    """The limits with the fault's own runnable tasks allowed for in the load per core."""
    return replace(limits, max_load_per_core=round(limits.max_load_per_core + runnable / cores(), 3))


def measured_the_machine(bundle: Path | None) -> bool:
    """The run ended because a cycle measured the machine (its sealed machine.json says so): an
    error to retry, never a verdict on the fault."""
    if bundle is None:
        return False
    try:
        return bool(json.loads((bundle / "machine.json").read_text("utf-8")).get("overloaded"))
    except (OSError, ValueError, AttributeError):
        return False

@dataclass
class Cycles:
    log: StageLog
    platform: Platform
    journal: Journal
    sampler: Sampler
    entry: Entry
    change: Change
    params: ValidationParams
    scope: tuple[str, ...]
    machine_cycles: list[dict[str, object]] = field(default_factory=list)
    others: SiteSamplers | None = None  # two-site apps: the other sites, observed beside every window
    untraced: dict[str, Window] = field(default_factory=dict)  # written, their spans not read yet

    def run(self) -> None:
        try:
            self.cycles()
            if self.untraced:
                self.log.progress("observe", "reading the last window's spans from Jaeger")
            self.attach_traces(wait=True)
        except BaseException:
            self.attach_traces(abandon=True)
            raise

    def cycles(self) -> None:
        for index, counted in plan(self.entry, self.params.repeat):
            before = self.window(f"before-{index}")
            cycle: CycleRecord = {"index": index, "counted": counted, "before": before}
            if self.others:
                cycle["sites"] = self.others.sites
            self.log.cycles.append(cycle)
            # A direct action acts at once: its after window opens just before it starts. A code or
            # config change is live once its rollout is done, and its window opens then.
            lead = self.sampler.sample(probe=False) if self.entry.direct else None
            cycle["inject"] = self.inject()
            self.log.save()
            if cycle["inject"]["ok"]:
                cycle["after"] = self.window(f"after-{index}", lead)
            cycle["revert"] = self.revert()
            self.log.save()
            cycle["recovery"] = self.window(f"recovery-{index}")
            self.log.save()
            self.check_machine(index, [before, cycle.get("after"), cycle["recovery"]])
            if not cycle["inject"]["ok"] or not cycle["revert"]["ok"]:
                break  # a change that cannot be made or undone will not behave better the next time

    def check_machine(self, index: int, windows: list[str | None]) -> None:
        """Record what the machine did in the cycle's windows (machine.json, a file of new bundles
        only: the judge never reads it, so every verdict is judged as before); a cycle that ran on a
        saturated machine, or whose samples came late, ends the run as an error to retry."""
        measured = [self.sampler.machine[w] for w in windows if w in self.sampler.machine]
        # the target's replicas are asked for only when a stress runs on each of them
        runnable = own_runnable(self.entry, lambda: len(self.platform.instances(self.entry.target.service)))
        limits = allowing(self.params.limits, runnable)
        problems = over_limits(measured, limits, self.params.interval_s)
        self.machine_cycles.append({"index": index, "windows": [w for w in windows if w], "overloaded": bool(problems),
                                    "why": problems})
        self.log.bundle.write("machine.json", {"limits": asdict(limits), "own_runnable": runnable,
                                               "interval_s": self.params.interval_s,
                                               "windows": dict(sorted(self.sampler.machine.items())),
                                               "cycles": self.machine_cycles,
                                               "overloaded": any(c["overloaded"] for c in self.machine_cycles)})
        if problems:
            raise Overloaded(f"overloaded: cycle {index} measured the machine, not the fault ({'; '.join(problems)}); "
                             "an error to retry on a quieter machine (or with a higher --max-load)")

    def window(self, name: str, lead: Sample | None = None) -> str:
        """Observe one window and write it into the bundle; returns its name."""
        self.log.begin(f"window {name}")
        spec = WindowSpec(name, self.params.window_s, self.params.interval_s)
        beside = self.others.start(spec) if self.others else {}
        data = self.sampler.window(
            spec,
            tick=lambda n, left: self.log.progress("observe", f"window {n}: {left:.0f}s left"),
            lead=lead,
        )
        data["points"] = screening.points(data, self.scope)
        self.log.bundle.write(f"windows/{name}.json", data)
        for other in SiteSamplers.finish(beside).values():
            other["points"] = screening.points(other, self.scope)
            self.log.bundle.write(f"windows/{other['name']}.json", other)
        if self.sampler.traces:
            self.untraced[name] = data
            self.attach_traces()
        return name

    def attach_traces(self, wait: bool = False, abandon: bool = False) -> None:
        """Write again each window whose spans have been read, with their summary (`wait`: every
        window's; `abandon`: no waiting, and a window whose spans are not read yet says so)."""
        if not self.sampler.traces:
            return
        traces = self.sampler.traces
        if abandon:  # every window still waiting: read, or recorded as not read
            read = traces.abandon()
            summaries = {name: read.get(name, {"error": UNREAD}) for name in self.untraced}
        else:
            summaries = traces.take(wait)
        for name, summary in summaries.items():
            data = self.untraced.pop(name)
            data["traces"] = summary
            self.log.bundle.write(f"windows/{name}.json", data)

    def inject(self) -> CheckRecord:
        """Journal the change, make it, and check that it holds."""
        self.log.begin("inject", self.entry.mechanism)
        index = self.journal.record(self.change)
        self.log.begin("inject:applying")
        try:
            applied = self.change.apply(self.platform)
        except NotReady as err:  # made, but what it rolled out never became ready: the protocol says so
            self.journal.mark(index, "applied")
            return {
                "ok": False,
                "measured": "not ready",
                "threshold": "started and ready",
                "detail": f"the change was made but did not become ready: {err}",
            }
        self.journal.mark(index, "applied", applied)
        return applied.in_place(self.platform).record()

    def revert(self) -> CheckRecord:
        """Undo every open change from the journal, and check that the undo holds."""
        self.log.begin("revert", self.entry.mechanism)
        self.log.begin("revert:applying")
        try:
            recover(self.platform, self.journal)
        except PlatformError as err:
            return {"ok": False, "measured": "failed", "threshold": "restored", "detail": f"revert failed: {err}"}
        return self.change.undone(self.platform).record()
