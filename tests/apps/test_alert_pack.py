"""Each app's alert pack (apps/<app>/alerts.yaml, issue 31): Prometheus' own tool checks it and
runs its unit tests (alerts_test.yaml: each rule fires on its signal, and not below its threshold)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers.cli import REPO

APP = REPO / "apps" / "minishop"
PACKS = sorted(p.parent for p in (REPO / "apps").glob("*/alerts.yaml"))


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is missing: install Debian's `prometheus` package (scripts/test.sh does)", pytrace=False)
    return found


def test_minishop_and_bank_of_anthos_have_packs() -> None:
    assert [p.name for p in PACKS] == ["bankofanthos", "minishop"]


@pytest.mark.parametrize("app", PACKS, ids=lambda p: p.name)
def test_the_pack_is_valid_and_its_unit_tests_pass(app: Path) -> None:
    check = subprocess.run([_promtool(), "check", "rules", "alerts.yaml"], cwd=app, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS: 4 rules found" in check.stdout
    tested = subprocess.run([_promtool(), "test", "rules", "alerts_test.yaml"], cwd=app, capture_output=True,
                            text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr


@pytest.mark.parametrize("app", PACKS, ids=lambda p: p.name)
def test_every_rule_is_unit_tested_firing_and_not_firing(app: Path) -> None:
    rules = {r["alert"] for g in yaml.safe_load((app / "alerts.yaml").read_text())["groups"] for r in g["rules"]}
    cases = [c for t in yaml.safe_load((app / "alerts_test.yaml").read_text())["tests"] for c in t["alert_rule_test"]]
    fired = {c["alertname"] for c in cases if c["exp_alerts"]}
    quiet = {c["alertname"] for c in cases if not c["exp_alerts"]}
    assert rules == fired == quiet


def test_a_broken_pack_fails_the_check_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "alerts.yaml"
    bad.write_text((APP / "alerts.yaml").read_text().replace("[30s]", "[30]", 1))
    check = subprocess.run([_promtool(), "check", "rules", str(bad)], capture_output=True, text=True)
    assert check.returncode != 0 and "parse error" in check.stdout + check.stderr
