"""Labels of the shipped minishop bundles: chains along the dependency graph, checkpoints that hold
in every counted cycle with a margin, and stored labels.json that judge recomputes byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.labels.catalog_io import admitted_entries, bundle_folder, label_fault
from faultkit.labels.checkpoints import holds
from faultkit.labels.core import LABELS, label_bundle, labels_text
from faultkit.workspace import Workspace
from tests.helpers.cli import run_cli
from tests.helpers.shipped import bundle_of

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def repo() -> Workspace:
    return Workspace(root=REPO, state_dir=REPO / ".faultkit")


@pytest.fixture(scope="module")
def labelled(repo: Workspace) -> dict[str, dict[str, Any]]:
    return {e.id: label_fault(repo, e).labels for e in admitted_entries(repo) if e.app == "minishop"}


def faultkit(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "FAULTKIT_ROOT"}
    return run_cli(*args, cwd=REPO, env=env)


def checkpoints(labels: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for step in labels["chain"] for c in step["checkpoints"]]


def test_every_shipped_admission_is_labelled_and_stored(labelled, repo):
    assert len(labelled) == 76
    for entry in admitted_entries(repo):  # Bank of Anthos' too
        item = label_fault(repo, entry)
        assert item.stored is True, f"{entry.id}: stored {LABELS} differs from the recomputation"


def test_code_fault_chain_runs_from_target_through_callers_to_frontend(labelled, repo):
    app = load_app(repo, "minishop")
    labels = labelled["minishop-code-shipping-carrier-selection"]
    chain = labels["chain"]
    assert [s["role"] for s in chain] == ["cause", "propagation", "impact"]
    assert [s["service"] for s in chain] == ["shipping", "checkout", "frontend"]
    assert chain[0]["artifact"]["ref"].startswith("src/shipping/")
    for callee, caller in zip(chain, chain[1:], strict=False):
        assert caller["service"] in app.callers(callee["service"]), (caller["service"], callee["service"])
    for step in chain:
        assert step["checkpoints"], f"{step['role']} {step['service']} has no checkpoint"
        for cp in step["checkpoints"]:
            assert [o["cycle"] for o in cp["observed"]] == [1, 2]
            assert all(holds(cp, o["after"]) for o in cp["observed"]), cp
    signals = [c["signal"] for c in checkpoints(labels)]
    assert 'http_requests_total{service="checkout",status="5xx"}' in signals
    assert 'http_requests_total{service="frontend",status="5xx"}' in signals


def test_checkpoints_hold_in_every_cycle_with_a_margin_before_never_passes(labelled):
    for fault, labels in labelled.items():
        assert labels["cycles"] == [1, 2], fault
        for cp in checkpoints(labels):
            assert set(cp) >= {"signal", "comparator", "value", "unit", "window"}
            for o in cp["observed"]:
                assert holds(cp, o["after"]), (fault, cp)
                assert not holds(cp, o["before"]), (fault, cp)  # it separates the windows
            if cp["comparator"] == ">=" and cp["unit"] in ("1/min", "ms"):
                assert cp["value"] < min(o["after"] for o in cp["observed"]), (fault, cp)  # not the exact figure


def test_checkout_quote_checkpoint_sits_below_the_measured_30_and_24(labelled):
    cps = {c["signal"]: c for c in checkpoints(labelled["minishop-code-checkout-shipping-quote"])}
    errors = cps['http_requests_total{service="checkout",status="5xx"}']
    assert [round(o["after"]) for o in errors["observed"]] == [30, 24]
    # one significant digit, rounded down, at half the smallest after value (24 / 2 = 12 -> 10)
    assert (errors["comparator"], errors["value"], errors["unit"]) == (">=", 10.0, "1/min")


def test_network_delay_checkpoints_include_latency(labelled):
    """The windows sample latency only as the symptom probe's round-trip time: the delay shows there."""
    labels = labelled["minishop-cartstore-network-delay"]
    latency = [c for c in checkpoints(labels) if c["unit"] == "ms"]
    assert latency, checkpoints(labels)
    cp = latency[0]
    assert cp["signal"].startswith("probe_latency_ms{") and cp["comparator"] == ">="
    assert cp["value"] >= 1000  # a 3000 ms delay, checked at a round margin
    assert all(o["before"] < 200 and o["after"] > 3000 for o in cp["observed"])
    assert [s["service"] for s in labels["chain"]] == ["cartstore", "cart", "frontend"]


def test_same_bundle_same_bytes(repo):
    app = load_app(repo, "minishop")
    entry = next(e for e in admitted_entries(repo) if e.id == "minishop-payment-network-delay")
    folder = bundle_folder(repo, entry)
    assert labels_text(label_bundle(folder, app)) == labels_text(label_bundle(folder, app))
    assert labels_text(label_bundle(folder, app)) == (folder / LABELS).read_text()


def test_judge_agrees_byte_for_byte_and_refuses_altered_labels(tmp_path):
    rel = bundle_of("minishop-cartstore-network-delay")
    proc = faultkit("judge", str(rel), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["matches_recorded"] is True and out["labels_match"] is True
    copy = tmp_path / "bundle"
    shutil.copytree(rel, copy)
    labels = json.loads((copy / LABELS).read_text())
    labels["chain"][-1]["checkpoints"][0]["value"] += 1
    (copy / LABELS).write_text(json.dumps(labels, indent=1, sort_keys=True) + "\n")
    trust = ("--trust", str(REPO / "keys" / "minishop-validator.pub"))  # the copy is outside the repository's [trust]
    proc = faultkit("judge", str(copy), *trust)
    assert proc.returncode == 1
    assert proc.stderr.startswith("Error: ") and "labels.json: differs from the labels recomputed" in proc.stderr
    assert "Traceback" not in proc.stderr
    (copy / LABELS).unlink()
    proc = faultkit("judge", str(copy), "--json", *trust)  # no labels stored: the verdict alone is judged
    assert proc.returncode == 0 and json.loads(proc.stdout)["labels_match"] is None


def test_release_carries_the_stored_labels():
    release = json.loads(sorted((REPO / "dist").glob("catalog-*.json"))[-1].read_text())
    assert sorted(release["labels"]) == sorted(release["bundles"])
    for fault, labels in release["labels"].items():
        assert labels["bundle"] == release["bundles"][fault]
    stored = json.loads((bundle_of("minishop-code-checkout-shipping-quote") / LABELS).read_text())
    assert release["labels"]["minishop-code-checkout-shipping-quote"] == stored


def test_label_command(tmp_path):
    proc = faultkit("label", "minishop-code-checkout-shipping-quote", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["faults"] == [{"fault": "minishop-code-checkout-shipping-quote", "checkpoints": 7, "stored": "same"}]
    assert out["labels"][0]["chain"][0]["service"] == "checkout"
    proc = faultkit("label", "minishop-nope")
    assert proc.returncode == 2 and proc.stderr.startswith("Error: 'minishop-nope' is not an admitted fault")
    proc = faultkit("label")
    assert proc.returncode == 2 and "name one FAULT or pass --all" in proc.stderr


def test_incident_records_carry_the_labels_as_ground_truth(repo, labelled):
    from faultkit.catalog.export import incident_records
    from faultkit.commands.release_cmds import custody

    records = {r["fault"]: r for r in incident_records(repo, custody(repo, ()))["records"]
               if r["fault"].startswith("minishop-")}
    assert sorted(records) == sorted(labelled)
    for fault, r in records.items():
        assert r["labels"]["chain"] == labelled[fault]["chain"]
        assert r["labels"]["evidence"] == labelled[fault]["evidence"]
        # the chain names the cause; the parts a model reads still do not
        assert r["labels"]["chain"][0]["service"] not in r["title"].split()
