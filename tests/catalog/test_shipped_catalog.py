"""The shipped minishop catalog: it lints clean, and its release and schedule are reproducible."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.cli import cli_env, run_cli

REPO = Path(__file__).resolve().parents[2]


def faultkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=REPO, env=cli_env(**(env or {})), timeout=600)


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
