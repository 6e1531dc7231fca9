"""scripts/campaign_probe_table.py: the per-fault probe figures of a campaign folder, as a table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "campaign_probe_table.py"


def rule(name: str, measured: str, counted: bool = True, passed: bool = True) -> dict:
    return {"rule": name, "measured": measured, "counted": counted, "passed": passed, "threshold": "", "detail": ""}


def test_each_counted_cycle_of_each_fault_is_a_cell_and_an_uncounted_cycle_is_left_out(tmp_path: Path):
    bundle = tmp_path / "bundles" / "f1" / "20261201T000000000Z"
    bundle.mkdir(parents=True)
    (bundle / "verdict.json").write_text(json.dumps({"failed_rules": ["probe-detects-fault"], "rules": [
        rule("probe-detects-fault", "25/25 failed (100%)", counted=False),
        rule("probe-detects-fault", "15/25 failed (60%)", passed=False),
        rule("probe-detects-fault", "24/25 failed (96%)"),
        rule("probe-healthy-before", "0/34 failed (0%)"),
        rule("screen-server-errors", "402.0")]}))
    (tmp_path / "summary.json").write_text(json.dumps({"per_fault": [
        {"fault": "f1", "mechanism": "direct", "outcome": "rejected", "attempts": ["overloaded", "rejected"],
         "wall_s": 63.4, "bundle": "bundles/f1/20261201T000000000Z"}]}))
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == ("| f1 | direct | rejected | probe-detects-fault | 2 | 63 | "
                                            "detects-fault 15/25 24/25; healthy-before 0/34 |")


def test_a_folder_that_is_no_campaign_gets_one_line_and_exit_1(tmp_path: Path):
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "not a finished campaign folder" in done.stderr
