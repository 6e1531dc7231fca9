"""How busy the machine is while a window is observed, so a verdict never measures the machine.

Four measures: the load average per core (os.getloadavg over the CPUs this process may use), CPU
steal (the share of CPU time the hypervisor gave elsewhere, from /proc/stat's `steal` column,
between two readings), sampler lag (how late each sample was taken against its schedule) and the
share of the window its samples span (a sample held past its time leaves the rest unobserved). A
cycle whose windows ran on a saturated machine, or whose samples came late, says nothing about the
fault: it is an error to retry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from faultkit.errors import PlatformError

# defaults: above these a cycle is overloaded. Load per core 8: runnable tasks eight times the
# cores for a minute (lenient for shared machines: a shared 2-core one still admitted the shipped
# sample at 4, and its other users push it to 7; a dedicated campaign can pass less); steal 20%: a
# fifth of the CPU went to other guests; lag: the sampler woke more than half an interval after a
# scheduled tick (the scheduler could not run it: its samples no longer show the app in time).
MAX_LOAD_PER_CORE = 8.0
MAX_STEAL = 0.2
MAX_LAG_INTERVALS = 0.5
# Samples that leave more of the window unspanned than this many intervals, or half the window if
# that is more, measured whatever held them (a scrape hung past its timeout), not the window: a
# cluster's pod proxy once held an 8 s window's samples for 31 s, and its rates came from 0.8 s.
# (A scrape of a frozen service that times out at 2 s leaves up to about 2 s at an interval of 1 s.)
MAX_UNCOVERED_INTERVALS = 3.0


@dataclass(frozen=True)
class CpuTimes:
    total: int
    steal: int


def cpu_times(stat: Path = Path("/proc/stat")) -> CpuTimes | None:
    """The aggregate `cpu` line's jiffies; None where the file does not exist (not Linux)."""
    try:
        first = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if not first or first[0] != "cpu":
        return None
    values = [int(v) for v in first[1:]]
    # user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user
    total = sum(values[:8])
    return CpuTimes(total=total, steal=values[7] if len(values) > 7 else 0)


def steal_between(a: CpuTimes | None, b: CpuTimes | None) -> float | None:
    if a is None or b is None or b.total <= a.total:
        return None
    return round((b.steal - a.steal) / (b.total - a.total), 4)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def load_per_core() -> float:
    return round(os.getloadavg()[0] / cores(), 3)


@dataclass(frozen=True)
class Limits:
    max_load_per_core: float = MAX_LOAD_PER_CORE
    max_steal: float = MAX_STEAL
    max_lag_intervals: float = MAX_LAG_INTERVALS
    max_uncovered_intervals: float = MAX_UNCOVERED_INTERVALS


class Overloaded(PlatformError):
    """A cycle observed a saturated machine: an error to retry, never a verdict on the fault."""


class MachineWindow(TypedDict):
    """What the machine did during one window (bundle file machine.json, per window)."""

    max_lag_s: float  # the latest a sample was taken after its scheduled time
    load_per_core: float  # the highest 1-minute load average per core read in the window
    steal: float | None  # share of CPU time stolen between the window's start and end
    cores: int
    window_s: float  # the window's planned length
    uncovered_s: float  # how much of it the samples did not span, first to last


class LoadMeter:
    """Reads the machine around a window: load and /proc/stat at its start, each sample's lag, and
    load and /proc/stat again at its end."""

    def __init__(self, stat: Path = Path("/proc/stat")) -> None:
        self.stat = stat
        self._start: CpuTimes | None = None
        self._lag = 0.0
        self._load = 0.0
        self._window_s = 0.0
        self._uncovered = 0.0

    def start(self) -> None:
        self._start, self._lag, self._load = cpu_times(self.stat), 0.0, load_per_core()

    def late(self, seconds: float) -> None:
        self._lag = max(self._lag, seconds)

    def spanned(self, window_s: float, first: float, last: float) -> None:
        """The window planned `window_s`; its samples were taken from `first` to `last`."""
        self._window_s = window_s
        self._uncovered = round(max(window_s - (last - first), 0.0), 3)

    def stop(self) -> MachineWindow:
        self._load = max(self._load, load_per_core())
        return {"max_lag_s": round(self._lag, 3), "load_per_core": self._load,
                "steal": steal_between(self._start, cpu_times(self.stat)), "cores": cores(),
                "window_s": self._window_s, "uncovered_s": self._uncovered}


def over_limits(windows: list[MachineWindow], limits: Limits, interval_s: float) -> list[str]:
    """What made these windows (one cycle's) overloaded; empty when the machine was fit to observe."""
    out = []
    lag = max((w["max_lag_s"] for w in windows), default=0.0)
    if lag > limits.max_lag_intervals * interval_s:
        out.append(f"sampler lag {lag:g}s > {limits.max_lag_intervals:g} x the {interval_s:g}s interval")
    load = max((w["load_per_core"] for w in windows), default=0.0)
    if load > limits.max_load_per_core:
        out.append(f"load average per core {load:g} > {limits.max_load_per_core:g}")
    steal = max((w["steal"] or 0.0 for w in windows), default=0.0)
    if steal > limits.max_steal:
        out.append(f"CPU steal {steal:.0%} > {limits.max_steal:.0%}")
    for w in windows:
        allowed = max(limits.max_uncovered_intervals * interval_s, w.get("window_s", 0.0) / 2)
        if w.get("uncovered_s", 0.0) > allowed:
            out.append(f"samples left {w['uncovered_s']:g}s of a {w['window_s']:g}s window unspanned "
                       f"(> {allowed:g}s)")
            break
    return out
