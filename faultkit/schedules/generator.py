"""The schedule generator: candidates, parameters and a seed in; inject and revert events out.

No files here. The same candidates (in any order), parameters and seed give the same events on
any machine: every random choice comes from prng.SplitMix64 and every float is made by operations
IEEE 754 requires to be correctly rounded (+, -, *, /, sqrt), which CPython performs as such.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from faultkit.catalog.vocab import CATEGORY_SHARES
from faultkit.errors import InputError
from faultkit.schedules.params import ScheduleParams, check, check_seed
from faultkit.schedules.prng import SplitMix64, stream

# Shares as exact integers (per mille), so the category draw is integer arithmetic.
_WEIGHTS = {c: round(s * 1000) for c, s in CATEGORY_SHARES.items()}


@dataclass(frozen=True)
class Injectable:
    """A fault the schedule may inject: its id, category and the artifact it changes."""

    id: str
    category: str
    artifact: str


@dataclass(frozen=True)
class Event:
    t: int  # seconds from the start of the run; always an invocation boundary
    invocation: int  # the event happens just before this invocation (0-based)
    op: str  # "inject" or "revert"
    fault: str
    category: str
    artifact: str
    case: int  # 1-based number of the injection; an inject and its revert share it

    def to_data(self) -> dict[str, object]:
        return {"t": self.t, "invocation": self.invocation, "op": self.op, "fault": self.fault,
                "category": self.category, "artifact": self.artifact, "case": self.case}


@dataclass(frozen=True)
class DrawnSchedule:
    events: tuple[Event, ...]
    stats: dict[str, object]


def target_shares(categories: Iterable[str]) -> dict[str, float]:
    """The production shares renormalised over the given categories."""
    present = sorted(set(categories) & set(_WEIGHTS))
    total = sum(_WEIGHTS[c] for c in present)
    return {c: _WEIGHTS[c] / total for c in present}


def generate(candidates: Sequence[Injectable], params: ScheduleParams, seed: int) -> DrawnSchedule:
    """Draw one schedule. Raises InputError when the candidates cannot make any schedule."""
    params, seed = check(params), check_seed(seed)
    pool = _pool(candidates)
    slots = arrival_slots(params, stream(seed, "arrivals"))
    cats, picks = stream(seed, "categories"), stream(seed, "choices")
    durations = stream(seed, "durations")
    supported = sorted(pool)
    total = sum(_WEIGHTS[c] for c in supported)
    reverts: dict[int, list[Event]] = {}
    active_ids: set[str] = set()
    active_artifacts: set[str] = set()
    events: list[Event] = []
    skipped: Counter[str] = Counter()
    case = 0
    for k in range(params.injection_slots):
        for ev in reverts.pop(k, []):
            events.append(ev)
            active_ids.discard(ev.fault)
            active_artifacts.discard(ev.artifact)
        for _ in range(slots.count(k)):
            category = _weighted(supported, total, cats)
            span = active_slots(params, durations)  # drawn even when skipped: streams stay aligned
            free = [c for c in pool[category]
                    if c.id not in active_ids and c.artifact not in active_artifacts]
            if not free:
                skipped[category] += 1
                continue
            chosen = free[picks.below(len(free))]
            case += 1
            t = k * params.interval_s
            events.append(Event(t, k, "inject", chosen.id, chosen.category, chosen.artifact, case))
            end = k + span
            revert = Event(end * params.interval_s, end, "revert", chosen.id, chosen.category,
                           chosen.artifact, case)
            reverts.setdefault(end, []).append(revert)
            active_ids.add(chosen.id)
            active_artifacts.add(chosen.artifact)
    for k in sorted(reverts):
        events.extend(reverts[k])
    return DrawnSchedule(tuple(events), _stats(events, params, len(slots), skipped, supported))


def arrival_slots(params: ScheduleParams, rng: SplitMix64) -> list[int]:
    """The invocation slot of each arrival, in order of arrival.

    Arrivals follow a Poisson process whose intensity rises linearly from l0 to ramp*l0 over the
    injection period, l0 chosen so the expected count is params.faults. The count is drawn first
    ("poisson": Binomial(n, faults/n) over the n seconds of the period, which is Poisson to within
    1/n and needs only integer comparisons; "fixed": exactly params.faults), then each arrival
    time independently from the ramp's density by inverse CDF: for u uniform in [0,1) the
    fraction of the period is x = u(R+1) / (1 + sqrt(1 + (R^2-1)u)). That form has no
    cancellation and uses only sqrt among non-trivial functions, which IEEE 754 requires to be
    correctly rounded (unlike log or exp), so the result is the same on every platform.
    """
    seconds = round(params.injection_minutes * 60)
    if params.arrivals == "fixed":
        count = params.faults
    else:
        count = sum(rng.bernoulli(params.faults, seconds) for _ in range(seconds))
    r = float(params.ramp)
    times = []
    for _ in range(count):
        u = rng.uniform()
        times.append(u * (r + 1.0) / (1.0 + math.sqrt(1.0 + (r * r - 1.0) * u)))
    n = params.injection_slots
    return [min(int(x * n), n - 1) for x in sorted(times)]


def active_slots(params: ScheduleParams, rng: SplitMix64) -> int:
    """How many invocations a fault stays active: a duration uniform in [min, max] minutes, and
    the revert waits for the first invocation boundary at or after it (faults change only
    between invocations), so 4 to 12 minutes become 3 to 6 invocations of 120 s."""
    low, high = params.min_active_minutes * 60, params.max_active_minutes * 60
    seconds = low + (high - low) * rng.uniform()
    return max(1, math.ceil(seconds / params.interval_s))


def active_profile(events: Iterable[Event | dict], invocations: int) -> list[int]:
    """The number of faults active during each invocation (injected before it, not yet reverted)."""
    delta = [0] * (invocations + 1)
    for e in events:
        op, k = (e.op, e.invocation) if isinstance(e, Event) else (e["op"], e["invocation"])
        if k < invocations:
            delta[k] += 1 if op == "inject" else -1
    out, level = [], 0
    for k in range(invocations):
        level += delta[k]
        out.append(level)
    return out


def _pool(candidates: Sequence[Injectable]) -> dict[str, list[Injectable]]:
    if not candidates:
        raise InputError("no candidate faults: the catalog holds no entries for this app; "
                         "add entries or choose another app")
    seen: set[str] = set()
    pool: dict[str, list[Injectable]] = {}
    for c in sorted(candidates, key=lambda c: c.id):
        if c.id in seen:
            raise InputError(f"fault {c.id!r} appears twice among the candidates; "
                             "fault ids must be unique")
        seen.add(c.id)
        if c.category in _WEIGHTS:
            pool.setdefault(c.category, []).append(c)
    if not pool:
        found = ", ".join(sorted({c.category for c in candidates}))
        raise InputError(f"none of the {len(candidates)} candidate faults has a schedule category "
                         f"(found: {found}); expected one of {', '.join(_WEIGHTS)}")
    return pool


def _weighted(categories: list[str], total: int, rng: SplitMix64) -> str:
    x = rng.below(total)
    for c in categories:
        x -= _WEIGHTS[c]
        if x < 0:
            return c
    raise AssertionError("unreachable: weights sum to total")


def _stats(events: list[Event], params: ScheduleParams, arrivals: int, skipped: Counter[str],
           supported: list[str]) -> dict[str, object]:
    profile = active_profile(events, params.invocations)
    injects = [e for e in events if e.op == "inject"]
    peak = max(profile, default=0)
    return {
        "arrivals": arrivals,
        "injected": len(injects),
        "skipped_draws": sum(skipped.values()),
        "skipped_by_category": dict(sorted(skipped.items())),
        "category_counts": dict(sorted(Counter(e.category for e in injects).items())),
        "target_shares": {c: round(s, 6) for c, s in target_shares(supported).items()},
        "invocations": params.invocations,
        "mean_active": round(sum(profile) / len(profile), 6) if profile else 0.0,
        "peak_active": peak,
        "peak_invocation": profile.index(peak) if profile else 0,
        "reverts_after_end": sum(e.op == "revert" and e.invocation >= params.invocations
                                 for e in events),
    }
