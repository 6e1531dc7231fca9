"""Lint warns when an entry's hand-written evidence names a metric or log keyword that never moved
in its admitting bundle, and suggests what did."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import yaml

from faultkit.labels.declared import check_declared
from tests.helpers.cli import run_cli
from tests.helpers.shipped import bundle_of

REPO = Path(__file__).resolve().parents[2]
FAULT = "minishop-code-checkout-shipping-quote"


def shipped(fault: str) -> tuple[dict, dict]:
    folder = bundle_of(fault)
    return json.loads((folder / "inputs.json").read_text())["entry"], json.loads((folder / "labels.json").read_text())


def test_declared_evidence_that_moved_gives_no_finding():
    entry, labels = shipped(FAULT)
    assert check_declared(entry, labels) == []


def test_a_declared_metric_that_did_not_move_is_a_finding_with_suggestions():
    entry, labels = shipped(FAULT)
    entry["evidence"]["metrics"] = ['http_requests_total{service="email",status="500"}', "server errors of checkout"]
    entry["evidence"]["logs"] = ["currency mismatch", "disk quota exceeded"]
    found = check_declared(entry, labels)
    assert [f.path for f in found] == ["evidence.metrics[0]", "evidence.logs[1]"]
    assert "never moved in the admitting bundle" in found[0].message
    assert 'http_requests_total{service="checkout",status="5xx"} (up)' in found[0].message  # the suggestion
    logged = sorted(t["template"] for t in labels["evidence"]["logs"])
    assert f"new error templates: {logged[0]!r}" in found[1].message  # what was logged instead


def test_lint_warns_on_an_entry_whose_declared_metric_did_not_move(tmp_path):
    """Through the real command, in a copy of the catalog with one entry's evidence edited."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "apps" / "minishop", root / "apps" / "minishop",
                    ignore=shutil.ignore_patterns("__pycache__", ".ruff_cache", ".pytest_cache"))
    (root / "catalog" / "minishop").mkdir(parents=True)
    shutil.copytree(REPO / "patches", root / "patches")
    bundle = bundle_of(FAULT).relative_to(REPO)  # where the entry says it is, in the copy too
    shutil.copytree(REPO / bundle, root / bundle)
    data = yaml.safe_load((REPO / "catalog" / "minishop" / f"{FAULT}.yaml").read_text())
    data["evidence"]["metrics"][0] = 'http_requests_total{service="payment",status="500"}'
    (root / "catalog" / "minishop" / f"{FAULT}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    env = {**os.environ, "FAULTKIT_ROOT": str(root)}
    proc = run_cli("catalog", "lint", "--strict", "--json", cwd=root, env=env, timeout=120)
    report = json.loads(proc.stdout)
    found = [f for f in report["findings"] if f["rule"] == "declared_evidence"]
    assert len(found) == 1, report["findings"]
    assert found[0]["severity"] == "warning" and found[0]["path"] == "evidence.metrics[0]"
    assert 'service=\\"payment\\"' in json.dumps(found[0]["message"]) and "observed instead" in found[0]["message"]
    assert proc.returncode == 0  # advice: --strict keeps it a warning (fixing it means validating again)
