"""Per cycle and window, the figures the screening rules hold against their thresholds.

The verdict records each rule's figure for the after window only; a reader needs the before and
recovery windows beside it to see the contrast, so they are computed here from the bundle's raw
samples with the same functions the rules use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from faultkit.bundles import read_json
from faultkit.errors import FaultkitError
from faultkit.observe.window import Window
from faultkit.validators import screening as sc
from faultkit.validators.judge import describe_sources

PHASES = ("before", "after", "recovery")


@dataclass(frozen=True)
class WindowFigure:
    cycle: int
    phase: str  # before / after / recovery
    window: str  # its file name in the bundle, e.g. after-1
    samples: int
    errors_per_min: float  # largest 5xx rate in scope, less the probe's own failures
    errors_at: str
    new_error_logs_per_min: float  # against the cycle's before window
    entry_ok_per_min: float  # non-5xx at the entry service
    restarts: int
    sources: str = ""  # which source measured the figures (rules v5 windows record it), for people


def window_figures(folder: Path) -> list[WindowFigure]:
    """Every counted cycle's windows; [] for a bundle without cycles in the validator's format."""
    try:
        inputs, stages = read_json(folder, "inputs.json"), read_json(folder, "stages.json")
        scope, entry = tuple(inputs["app"]["scope"]), inputs["app"]["entry"]
        version = sc.sealed_version(inputs)
        cycles = [c for c in stages["cycles"] if c.get("counted")]
    except (FaultkitError, KeyError, TypeError):
        return []
    out = []
    for c in cycles:
        windows: dict[str, Window] = {p: read_json(folder, f"windows/{c[p]}.json") for p in PHASES if c.get(p)}
        before = windows.get("before")
        for phase, w in windows.items():
            if not w.get("samples"):
                continue
            errors, where = sc.error_rate(w, scope)
            new_logs = sc.new_error_log_rate(before, w, version)[0] if before and phase != "before" else 0.0
            out.append(WindowFigure(c["index"], phase, c[phase], len(w["samples"]), errors, where, new_logs,
                                    round(sc.rate(w, entry, "ok"), 3), sc.restarts(w, scope)[0],
                                    describe_sources(w.get("sources", {}))))
    return out
