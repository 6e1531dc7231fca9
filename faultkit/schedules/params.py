"""Schedule parameters, the presets, and the checks that turn a bad value into one clear line."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

from faultkit.errors import UsageError

INTERVAL_S = 120  # the agent is invoked every 120 s; faults change only between invocations
MAX_SEED = (1 << 64) - 1


@dataclass(frozen=True)
class ScheduleParams:
    """What shapes a schedule. Minutes are whole multiples of the invocation interval."""

    preset: str
    faults: int  # target number of injections (the expected count when arrivals are "poisson")
    injection_minutes: float
    observation_minutes: float
    ramp: float  # intensity at the end of the injection period over that at its start
    # "poisson": the count varies around `faults`; "fixed": exactly that many
    arrivals: str = "poisson"
    min_active_minutes: float = 4.0
    max_active_minutes: float = 12.0
    interval_s: int = INTERVAL_S

    @property
    def injection_slots(self) -> int:
        return round(self.injection_minutes * 60 / self.interval_s)

    @property
    def invocations(self) -> int:
        return round((self.injection_minutes + self.observation_minutes) * 60 / self.interval_s)

    def to_data(self) -> dict[str, Any]:
        return asdict(self)


# main: the reference marathon schedule (SPEC.md section 4).
# light-10 / light-5: short runs at lower load; the reference gives only the fault counts, so the
# periods are ours: 20 + 10 minutes for ten faults, 10 + 10 for five, with exactly that many faults
# ("fixed") because a short run is compared by its count, and the same four-fold ramp.
PRESETS: dict[str, ScheduleParams] = {
    "main": ScheduleParams("main", 60, 60, 30, 4.0, "poisson"),
    "light-10": ScheduleParams("light-10", 10, 20, 10, 4.0, "fixed"),
    "light-5": ScheduleParams("light-5", 5, 10, 10, 4.0, "fixed"),
}


def preset(name: str, **overrides: Any) -> ScheduleParams:
    """A preset with some values replaced (None means keep the preset's), then checked."""
    if name not in PRESETS:
        raise UsageError(f"--preset: unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    changes = {k: v for k, v in overrides.items() if v is not None}
    return check(replace(PRESETS[name], **changes))


def check(p: ScheduleParams) -> ScheduleParams:
    """Raise UsageError for the first value that cannot make a schedule; return p otherwise."""
    minutes = p.interval_s / 60
    _number(p.injection_minutes, "--injection-minutes")
    _number(p.observation_minutes, "--observation-minutes")
    _number(p.ramp, "--ramp")
    if p.injection_minutes <= 0:
        raise UsageError(f"--injection-minutes: {p.injection_minutes:g} is not a duration; "
                         "give a positive number of minutes such as 60")
    if p.observation_minutes < 0:
        raise UsageError(f"--observation-minutes: {p.observation_minutes:g} is negative; "
                         "give 0 or more minutes such as 30")
    periods = (("--injection-minutes", p.injection_minutes),
               ("--observation-minutes", p.observation_minutes))
    for name, value in periods:
        if not _whole(value / minutes):
            nearest = math.ceil(value / minutes) * minutes
            raise UsageError(f"{name}: {value:g} is not a whole number of {minutes:g}-minute "
                             f"invocations; use e.g. {nearest:g}")
    if isinstance(p.faults, bool) or not isinstance(p.faults, int) or p.faults <= 0:
        raise UsageError(f"--faults: {p.faults!r} is not a positive whole number; give e.g. 60")
    if p.faults > p.injection_minutes * 60:
        raise UsageError(f"--faults: {p.faults} is more than one fault per second of a "
                         f"{p.injection_minutes:g}-minute injection period; "
                         "lengthen it or ask for fewer")
    if p.ramp < 1:
        raise UsageError(f"--ramp: {p.ramp:g} is below 1; the intensity must rise or stay flat "
                         "(1 = constant, 4 = reference)")
    if p.arrivals not in ("poisson", "fixed"):
        raise UsageError(f"arrivals: {p.arrivals!r} is not 'poisson' or 'fixed'")
    if not 0 < p.min_active_minutes <= p.max_active_minutes:
        raise UsageError(f"active minutes: {p.min_active_minutes:g} to "
                         f"{p.max_active_minutes:g} is not a positive range")
    return p


def check_seed(seed: object) -> int:
    """The seed as an int in [0, 2**64), or a UsageError that says what a seed is."""
    if isinstance(seed, str):
        text = seed.strip()
        if not text.lstrip("-").isdigit():
            raise UsageError(f"--seed: {seed!r} is not an integer; pass a whole number such as 42")
        seed = int(text)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UsageError(f"--seed: {seed!r} is not an integer; pass a whole number such as 42")
    if not 0 <= seed <= MAX_SEED:
        raise UsageError(f"--seed: {seed} is outside 0..{MAX_SEED}; "
                         "pass a non-negative 64-bit integer")
    return seed


def _number(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise UsageError(f"{name}: {value!r} is not a finite number")


def _whole(x: float) -> bool:
    return abs(x - round(x)) < 1e-9
