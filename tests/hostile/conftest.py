"""Hostile input: what a contributor whose faults are being judged could put in a pull request.

Every case must end in a clean refusal: exit 1 or 2, one `Error:` line on stderr, no traceback,
no crash log, no signal, nothing written outside the repository.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "release"))

Run = Callable[..., subprocess.CompletedProcess[str]]


def assert_clean(proc: subprocess.CompletedProcess[str], code: int = 1, *needles: str) -> str:
    """The refusal is one line through faultkit's handler, with the exit code of its kind."""
    err = proc.stderr.strip()
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr and "unexpected" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.fixture
def run(ws) -> Run:  # type: ignore[no-untyped-def]
    """The real `faultkit` in the workspace, bounded in time (a hang is a failure, not a stuck CI)."""

    def go(*args: str, timeout: float = 120, cwd: Path | None = None,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "faultkit.cli", *args], cwd=cwd or ws.root, capture_output=True,
                              text=True, timeout=timeout, env={**os.environ, **(env or {})})

    return go
