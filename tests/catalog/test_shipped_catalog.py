"""The shipped minishop catalog: it lints clean, its release and schedule are reproducible, and a
sample of two faults per mechanism is validated end to end on every run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from faultkit.catalog.lint import lint
from faultkit.platforms.local import LocalPlatform
from faultkit.validators.pipeline import Params, validate
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
SAMPLE = {
    "config": ["minishop-checkout-env-payment-addr-port", "minishop-cart-env-cartstore-password"],
    "direct": ["minishop-cartstore-instance-failure", "minishop-payment-instance-failure"],
    "code": ["minishop-code-checkout-shipping-quote", "minishop-code-cart-line-totals"],
}


def faultkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "faultkit.cli", *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)


def test_shipped_catalog_lints_clean():
    proc = faultkit("catalog", "lint", "--strict")
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_release_and_schedule_are_reproduced_byte_for_byte(tmp_path):
    releases = sorted((REPO / "dist").glob("catalog-*.json"))
    assert releases, "the minishop release is committed under dist/"
    release = json.loads(releases[-1].read_text())
    proc = faultkit("catalog", "build", "--version", release["version"], "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / releases[-1].name).read_bytes() == releases[-1].read_bytes()
    committed = REPO / "schedules" / "minishop-main-seed1.json"
    proc = faultkit("schedule", "export", "--app", "minishop", "--seed", "1", "--release", str(releases[-1]),
                    "--out", str(tmp_path / "schedule.json"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "schedule.json").read_bytes() == committed.read_bytes()


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, LocalPlatform, Path]]:
    tmp = tmp_path_factory.mktemp("sample")
    ws = Workspace(REPO, tmp / "state")
    platform = LocalPlatform(ws, environ={**os.environ, "FAULTKIT_STATE_DIR": str(ws.state_dir)})
    platform.up("minishop")
    try:
        yield ws, platform, tmp / "evidence"
    finally:
        platform.down()


@pytest.mark.parametrize("fault", [f for faults in SAMPLE.values() for f in faults])
def test_sample_is_admitted_end_to_end(shop, fault):
    ws, platform, evidence = shop
    entry = next(e for e in lint(ws, [ws.catalog_dir / "minishop" / f"{fault}.yaml"]).entries)
    assert entry.validation and entry.validation.verdict == "admitted"  # what the catalog claims ...
    verdict, _ = validate(ws, platform, fault, Params(window_s=5, interval_s=1, repeat=2), evidence=evidence,
                          record=False)
    assert verdict["status"] == "admitted", verdict["summary"]  # ... holds again here and now
