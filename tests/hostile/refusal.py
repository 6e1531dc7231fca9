"""What every hostile-input case must end in: a clean refusal through faultkit's one handler."""

from __future__ import annotations

import subprocess


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
