"""mypy over faultkit/ with the settings in pyproject.toml ([tool.mypy]) must find nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_mypy_is_clean() -> None:
    proc = subprocess.run([sys.executable, "-m", "mypy", "faultkit"], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_type_ignore_left() -> None:
    """Checked, not silenced: a `# type: ignore` would hide the next real error on its line."""
    found = [f"{p.relative_to(REPO)}:{n}" for p in sorted((REPO / "faultkit").rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "type: ignore" in line]
    assert not found, found
