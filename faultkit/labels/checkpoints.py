"""Numeric checkpoints `{signal, comparator, value, unit, window}` with margins the data supports.

A checkpoint's value is never the exact observed number: a rise is checked against a round number
(one significant digit, rounded down) at a fraction of the smallest after value over the counted
cycles, a fall against a round number above the largest after value, and either one must also
separate the after windows from every before window. A checkpoint that held in some cycle but not
in all is not made. Every checkpoint carries what each cycle measured, so a reader can see the
margin.
"""

from __future__ import annotations

import math
from typing import Any

RISE_FRACTIONS = (0.5, 0.8, 0.9)
FALL_FACTORS = (2.0, 1.25, 1.1)


def round_down(x: float) -> float:
    """One significant digit, rounded down: 87 -> 80, 43.5 -> 40, 4.35 -> 4, 0.62 -> 0.6."""
    if x <= 0:
        return 0.0
    step = 10.0 ** math.floor(math.log10(x))
    return _clean(math.floor(x / step + 1e-9) * step)


def round_up(x: float) -> float:
    """One significant digit, rounded up: 87 -> 90, 0 -> 0."""
    if x <= 0:
        return 0.0
    step = 10.0 ** math.floor(math.log10(x))
    return _clean(math.ceil(x / step - 1e-9) * step)


def _clean(x: float) -> float:
    """Drop float noise (0.30000000000000004) so the same data gives the same bytes."""
    return float(f"{x:.6g}")


def rise_value(before: list[float], after: list[float]) -> float | None:
    """A round threshold every after value meets and no before value does; None when there is none."""
    floor = min(after)
    for f in RISE_FRACTIONS:
        v = round_down(f * floor)
        if v > 0 and v > max(before, default=0.0) and all(a >= v for a in after):
            return v
    return None


def fall_value(before: list[float], after: list[float]) -> float | None:
    ceiling = max(after)
    for f in FALL_FACTORS:
        v = round_up(max(f * ceiling, 0.1 * min(before)))
        if v < min(before) and all(a <= v for a in after):
            return v
    return None


def checkpoint(signal: str, comparator: str, value: float, unit: str, observed: list[dict[str, Any]],
               modality: str) -> dict[str, Any]:
    return {
        "signal": signal,
        "comparator": comparator,
        "value": value,
        "unit": unit,
        "window": "after",
        "modality": modality,
        "observed": observed,
    }


def holds(cp: dict[str, Any], value: float) -> bool:
    v = cp["value"]
    return {">=": value >= v, "<=": value <= v, ">": value > v, "<": value < v}[cp["comparator"]]


def for_series(series: dict[str, Any], modality: str = "metric") -> dict[str, Any] | None:
    """The checkpoint of one moved series (a metric's, or an operation's spans with modality
    "trace"), or None when no round value separates the windows."""
    before = [c["before"] for c in series["cycles"]]
    after = [c["after"] for c in series["cycles"]]
    keys = ("service", "route", "status", "operation", "kind")
    labels = ",".join(f'{k}="{series[k]}"' for k in keys if k in series)
    signal = f"{series['metric']}{{{labels}}}"
    observed = [{"cycle": c["cycle"], "before": c["before"], "after": c["after"]} for c in series["cycles"]]
    if series["direction"] == "up":
        v = rise_value(before, after)
        return checkpoint(signal, ">=", v, series["unit"], observed, modality) if v is not None else None
    v = fall_value(before, after)
    return checkpoint(signal, "<=", v, series["unit"], observed, modality) if v is not None else None


def for_failing_path(path: dict[str, Any]) -> dict[str, Any] | None:
    """Failing traces along one observed path, when every counted cycle had some."""
    counts = [float(c["traces"]) for c in path["cycles"]]
    v = rise_value([0.0], counts) if all(counts) else None
    if v is None:
        return None
    observed = [{"cycle": c["cycle"], "before": 0, "after": c["traces"]} for c in path["cycles"]]
    signal = f'failing_traces{{path="{" > ".join(path["path"])}"}}'
    return checkpoint(signal, ">=", v, "traces", observed, "trace")


def for_template(item: dict[str, Any]) -> dict[str, Any] | None:
    rates = [c["per_min"] for c in item["cycles"]]
    if not all(rates):
        return None  # new in some cycle only: key evidence, not a checkpoint
    signal = f'log_template_rate{{service="{item["service"]}",template="{item["template"]}"}}'
    observed = [{"cycle": c["cycle"], "before": 0.0, "after": c["per_min"]} for c in item["cycles"]]
    v = rise_value([0.0], rates)
    return checkpoint(signal, ">=", v, "1/min", observed, "log") if v is not None else None


EVENT_SIGNALS = {"restart": ("restarts", "restarts"), "oom-kill": ("oom_kills", "kills"),
                 "unready": ("unready_instances", "instances")}


def count_value(before: list[int], after: list[int]) -> int | None:
    """Counts are small integers: one more than any before window saw (at least one), if every
    after window reached it."""
    v = max([0, *before]) + 1
    return v if after and min(after) >= v else None


def for_event(item: dict[str, Any]) -> dict[str, Any] | None:
    before, after = [c["before"] for c in item["cycles"]], [c["count"] for c in item["cycles"]]
    v = count_value(before, after)
    if v is None:
        return None  # seen in some cycle only: key evidence, not a checkpoint
    name, unit = EVENT_SIGNALS[item["kind"]]
    observed = [{"cycle": c["cycle"], "before": c["before"], "after": c["count"]} for c in item["cycles"]]
    return checkpoint(f'{name}{{service="{item["service"]}"}}', ">=", v, unit, observed, "event")


def for_probe(route: str, failures: list[tuple[int, int, int, int]]) -> dict[str, Any] | None:
    """failures: (cycle, failed before, failed after, probes after)."""
    v = count_value([fb for _, fb, _, _ in failures], [fa for _, _, fa, _ in failures])
    if v is None:
        return None
    observed = [{"cycle": i, "before": fb, "after": fa} for i, fb, fa, _ in failures]
    return checkpoint(f'probe_failures{{route="{route}"}}', ">=", v, "probes", observed, "metric")
