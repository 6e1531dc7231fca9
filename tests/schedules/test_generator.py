from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from faultkit.catalog.model import entry_from_data
from faultkit.errors import InputError, UsageError
from faultkit.schedules.generator import Injectable, active_profile, arrival_slots, generate
from faultkit.schedules.params import PRESETS, preset
from faultkit.schedules.prng import stream
from tests.schedules.entries import shop_entries

MAIN = PRESETS["main"]


def candidates(app: str = "shop") -> list[Injectable]:
    out = []
    for data in shop_entries():
        if data["app"] == app:
            e = entry_from_data(data)
            out.append(Injectable(e.id, e.category, e.artifact_key))
    return out


@pytest.fixture(scope="module")
def runs() -> list:
    pool = candidates()
    return [generate(pool, MAIN, seed) for seed in range(40)]


def test_same_input_same_events_whatever_the_candidate_order():
    pool = candidates()
    assert generate(pool, MAIN, 5) == generate(list(reversed(pool)), MAIN, 5)
    assert generate(pool, MAIN, 5).events != generate(pool, MAIN, 6).events


def test_every_fault_is_reverted_after_its_injection_within_4_to_12_minutes(runs):
    for r in runs:
        injects = {e.case: e for e in r.events if e.op == "inject"}
        reverts = {e.case: e for e in r.events if e.op == "revert"}
        assert injects.keys() == reverts.keys()
        for case, inj in injects.items():
            active = reverts[case].t - inj.t
            assert 4 * 60 <= active <= 12 * 60
            assert reverts[case].fault == inj.fault


def test_events_sit_on_invocation_boundaries_and_in_time_order(runs):
    for r in runs:
        assert all(e.t == e.invocation * MAIN.interval_s for e in r.events)
        keys = [(e.t, e.op == "inject") for e in r.events]
        assert keys == sorted(keys)


def test_no_injection_in_the_observation_period(runs):
    for r in runs:
        assert all(e.t < 60 * 60 for e in r.events if e.op == "inject")


def test_no_two_active_faults_share_an_artifact_or_an_id(runs):
    for r in runs:
        artifacts: set[str] = set()
        ids: set[str] = set()
        for e in r.events:  # reverts come first at a boundary, so this replays the run
            if e.op == "revert":
                artifacts.remove(e.artifact)
                ids.remove(e.fault)
            else:
                assert e.artifact not in artifacts and e.fault not in ids
                artifacts.add(e.artifact)
                ids.add(e.fault)


def test_stats_agree_with_the_events(runs):
    for r in runs:
        s = r.stats
        assert s["injected"] + s["skipped_draws"] == s["arrivals"]
        profile = active_profile(r.events, s["invocations"])
        assert s["peak_active"] == max(profile)
        assert s["mean_active"] == pytest.approx(sum(profile) / len(profile), abs=1e-6)
        assert "authentication" not in s["target_shares"]  # shop has no such faults
        assert sum(s["target_shares"].values()) == pytest.approx(1.0, abs=1e-5)


def test_category_mix_follows_the_renormalised_shares(runs):
    counts: dict[str, int] = {}
    for r in runs:
        for c, n in r.stats["category_counts"].items():
            counts[c] = counts.get(c, 0) + n
    total = sum(counts.values())
    for c, share in runs[0].stats["target_shares"].items():
        assert abs(counts[c] / total - share) < 0.03, c


def test_main_schedule_has_about_sixty_faults_and_rising_arrivals(runs):
    assert 50 <= statistics.mean(r.stats["arrivals"] for r in runs) <= 70
    slots = [k for seed in range(200) for k in arrival_slots(MAIN, stream(seed, "arrivals"))]
    first, last = sum(k < 5 for k in slots), sum(k >= 25 for k in slots)
    # Linear 1 -> 4 ramp: the last sixth holds (3.5+4)/(1+1.5) = 3 times the first sixth.
    assert 2.5 < last / first < 3.6


def test_light_presets_inject_exactly_their_count_when_the_catalog_allows():
    pool = candidates("rail")
    for name, count in (("light-10", 10), ("light-5", 5)):
        r = generate(pool, PRESETS[name], 3)
        assert r.stats["arrivals"] == count
        assert r.stats["injected"] == count


def test_draws_with_no_compatible_fault_are_skipped_and_counted():
    pool = [Injectable("only-one", "code-bug", "x/build"), Injectable("same-art", "code-bug", "x/build")]
    r = generate(pool, MAIN, 1)
    assert r.stats["skipped_draws"] > 0
    assert r.stats["skipped_by_category"] == {"code-bug": r.stats["skipped_draws"]}
    assert r.stats["peak_active"] == 1


def test_ramp_one_is_flat_and_valid():
    r = generate(candidates(), replace(MAIN, ramp=1.0), 2)
    assert r.stats["injected"] > 0


@pytest.mark.parametrize("overrides, message", [
    ({"injection_minutes": 0}, "--injection-minutes: 0 is not a duration"),
    ({"injection_minutes": -10}, "--injection-minutes: -10 is not a duration"),
    ({"observation_minutes": -2}, "--observation-minutes: -2 is negative"),
    ({"injection_minutes": 5}, "not a whole number of 2-minute invocations"),
    ({"ramp": 0.5}, "--ramp: 0.5 is below 1"),
    ({"faults": 0}, "--faults: 0 is not a positive whole number"),
])
def test_bad_parameters_are_usage_errors(overrides, message):
    with pytest.raises(UsageError, match=message):
        preset("main", **overrides)


@pytest.mark.parametrize("seed", ["x", "1.5", 1.5, -1, 2**64, True])
def test_bad_seeds_are_usage_errors(seed):
    with pytest.raises(UsageError, match="--seed"):
        generate(candidates(), MAIN, seed)


def test_empty_and_categoryless_candidates_are_input_errors():
    with pytest.raises(InputError, match="no candidate faults"):
        generate([], MAIN, 1)
    with pytest.raises(InputError, match="has a schedule category"):
        generate([Injectable("odd-one", "weather", "a")], MAIN, 1)
