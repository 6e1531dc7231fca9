"""How busy the machine is while a window is observed, so a verdict never measures the machine.

Three measures: the load average per core (os.getloadavg over the CPUs this process may use), CPU
steal (the share of CPU time the hypervisor gave elsewhere, from /proc/stat's `steal` column,
between two readings) and sampler lag (how late each sample was taken against its schedule). A
cycle whose windows ran on a saturated machine, or whose samples came late, says nothing about the
fault: it is an error to retry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# defaults: above these a cycle is overloaded. Load per core 3: runnable tasks three times the
# cores for a minute; steal 20%: a fifth of the CPU went to other guests; lag: a sample later than
# half its interval (the sampler skips ticks it overran, so a lagging window has fewer samples).
MAX_LOAD_PER_CORE = 3.0
MAX_STEAL = 0.2
MAX_LAG_INTERVALS = 0.5


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
