"""Every shipped evidence bundle re-judges, from the bundle alone, to its recorded verdict byte for
byte, and every catalog entry's validation record agrees with the bundle it names. No app runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from faultkit.bundles import dumps, read_json, verify_bundle
from faultkit.validators.judge import judge_bundle, verify_and_judge
from tests.helpers.shipped import all_bundles

REPO = Path(__file__).resolve().parents[2]
BUNDLES = all_bundles()
ENTRIES = sorted((REPO / "catalog").glob("*/*.yaml"))


def test_the_shipped_bundles_are_all_here():
    assert len(BUNDLES) >= 69
    assert len(ENTRIES) >= 69


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.relative_to(REPO / "evidence").as_posix())
def test_bundle_rejudges_to_its_recorded_verdict_byte_for_byte(bundle: Path):
    verify_bundle(bundle)  # sealed and untouched
    recomputed = judge_bundle(bundle)
    assert dumps(recomputed) == (bundle / "verdict.json").read_text("utf-8")
    verdict, same = verify_and_judge(bundle)
    assert same and verdict == recomputed


@pytest.mark.parametrize("path", ENTRIES, ids=lambda p: p.stem)
def test_entry_records_the_verdict_of_its_bundle(path: Path):
    record = yaml.safe_load(path.read_text("utf-8"))["validation"]
    bundle = REPO / record["bundle"]
    verdict = read_json(bundle, "verdict.json")
    assert verdict["fault"] == path.stem
    assert record["bundle_digest"] == verify_bundle(bundle)
    # validated twice (--stability): the second bundle's verdict weighs both runs (flaky when they
    # differ), and it is the entry's
    second = record.get("stability")
    if second:
        assert second["bundle_digest"] == verify_bundle(REPO / second["bundle"])
    final = read_json(REPO / second["bundle"], "verdict.json") if second else verdict
    assert record["verdict"] == final["status"]
    assert record.get("failed_rules", []) == final["failed_rules"]
    inputs = json.loads((bundle / "inputs.json").read_text("utf-8"))
    assert (record["window_s"], record["repeat"]) == (inputs["params"]["window_s"], inputs["params"]["repeat"])
