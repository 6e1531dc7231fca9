"""How long a fault's validation is expected to take: the protocol's windows plus measured setup.

A cycle is three windows (before, after, recovery). Code and direct faults run `repeat` counted
cycles; config faults run one more, uncounted, first (SPEC.md section 3). Around the windows a run
spends time the window length does not set: its static stages (lint, patch, the service's own
lint and tests, the build, baseline readiness) and each change's rollout and revert. Those are
measured from sealed bundles: a bundle's run id is its start time, its first window's start ends
the setup, and whatever lies between the windows is the changes' time.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

MECHANISMS = ("code", "config", "direct")
WINDOWS_PER_CYCLE = 3

# Used only where no bundle of a mechanism has been measured yet: seconds of setup (static stages)
# and of changes per cycle (rollout and revert), as quiet 2-core runs of minishop took them.
DEFAULT_SETUP_S = {"code": 20.0, "config": 2.0, "direct": 1.0}
DEFAULT_CHANGE_S = {"code": 8.0, "config": 6.0, "direct": 1.0}
# `faultkit up` of a fresh instance, and its `down`: a rebuild costs both.
DEFAULT_INSTANCE_UP_S = 20.0


def cycles(mechanism: str, repeat: int) -> int:
    return repeat + (1 if mechanism == "config" else 0)


def windows(mechanism: str, repeat: int) -> int:
    return WINDOWS_PER_CYCLE * cycles(mechanism, repeat)


@dataclass(frozen=True)
class Overheads:
    """Per mechanism: seconds before the first window, and seconds of changes per cycle."""

    setup_s: dict[str, float]
    change_s: dict[str, float]
    measured: dict[str, int]  # bundles each mechanism's figures come from (0: the defaults)
    instance_up_s: float = DEFAULT_INSTANCE_UP_S

    def expected_s(self, mechanism: str, window_s: float, repeat: int) -> float:
        n = cycles(mechanism, repeat)
        # an entry with no valid mechanism is planned as the longest (validate's lint rejects it)
        setup = self.setup_s.get(mechanism, max(self.setup_s.values()))
        change = self.change_s.get(mechanism, max(self.change_s.values()))
        return setup + n * (WINDOWS_PER_CYCLE * window_s + change)

    def as_dict(self) -> dict[str, object]:
        return {"setup_s": self.setup_s, "change_s": self.change_s, "measured_bundles": self.measured,
                "instance_up_s": self.instance_up_s}


@dataclass(frozen=True)
class BundleTimes:
    mechanism: str
    setup_s: float
    change_s_per_cycle: float
    wall_s: float


def run_started(run_id: str) -> float | None:
    """A bundle folder's name is its run's start, e.g. 20261130T032605277Z (milliseconds)."""
    try:
        return datetime.strptime(run_id[:-1] + "000", "%Y%m%dT%H%M%S%f").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def bundle_times(folder: Path) -> BundleTimes | None:
    """Setup and change time of one sealed bundle; None for one that is not a finished run."""
    started = run_started(folder.name)
    try:
        inputs = json.loads((folder / "inputs.json").read_text("utf-8"))
        stages = json.loads((folder / "stages.json").read_text("utf-8"))
        spans = []
        for path in (folder / "windows").glob("*.json"):
            w = json.loads(path.read_text("utf-8"))
            spans.append((float(w["start"]), float(w["end"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    counted = len(stages.get("cycles") or [])
    if started is None or not spans or not counted or stages.get("aborted"):
        return None
    spans.sort()
    first, last = spans[0][0], spans[-1][1]
    in_windows = sum(end - start for start, end in spans)
    return BundleTimes(
        mechanism=str(inputs["entry"].get("mechanism")),
        setup_s=max(0.0, first - started),
        change_s_per_cycle=max(0.0, (last - first - in_windows) / counted),
        wall_s=max(0.0, last - started),
    )


def instance_up_times(roots: Iterable[Path]) -> list[float]:
    """How long `faultkit up` of a fresh instance took in earlier campaigns (their events.jsonl)."""
    out = []
    for root in roots:
        for path in sorted(root.glob("**/events.jsonl")) if root.is_dir() else ():
            for line in path.read_text("utf-8").splitlines():
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("kind") == "up" and isinstance(event.get("seconds"), (int, float)):
                    out.append(float(event["seconds"]))
    return out


def measure(bundle_roots: Iterable[Path]) -> Overheads:
    """Median setup and change times per mechanism over every finished bundle under the roots, and
    the median instance bring-up of earlier campaigns there."""
    bundle_roots = list(bundle_roots)
    ups = instance_up_times(bundle_roots)
    found: dict[str, list[BundleTimes]] = {m: [] for m in MECHANISMS}
    for root in bundle_roots:
        if not root.is_dir():
            continue
        for manifest in sorted(root.glob("**/MANIFEST.json")):
            t = bundle_times(manifest.parent)
            if t is not None and t.mechanism in found:
                found[t.mechanism].append(t)
    setup, change = {}, {}
    for m in MECHANISMS:
        times = found[m]
        setup[m] = round(statistics.median(t.setup_s for t in times), 1) if times else DEFAULT_SETUP_S[m]
        change[m] = round(statistics.median(t.change_s_per_cycle for t in times), 1) if times else DEFAULT_CHANGE_S[m]
    return Overheads(setup, change, {m: len(found[m]) for m in MECHANISMS},
                     round(statistics.median(ups), 1) if ups else DEFAULT_INSTANCE_UP_S)
