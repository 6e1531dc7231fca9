"""The one way tests run the `faultkit` command: the real process, `python3 -m faultkit.cli`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Protocol

REPO = Path(__file__).resolve().parent.parent.parent
# the command line of the real CLI, for the few tests that need a Popen (signals, two runs at once)
FAULTKIT = (sys.executable, "-m", "faultkit.cli")


class CLI(Protocol):
    """The `cli` fixture: runs faultkit in the test's workspace."""

    def __call__(self, *args: str, check: int | None = None, env: dict[str, str] | None = None,
                 input: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]: ...


def cli_env(**overrides: str) -> dict[str, str]:
    """This process's environment with faultkit importable from the checkout, plus overrides."""
    env = {**os.environ, **overrides}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def run_cli(*args: str, cwd: Path, check: int | None = None, env: dict[str, str] | None = None,
            input: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `faultkit ARGS` in cwd; with check, assert the exit code and show the output when it differs."""
    proc = subprocess.run([*FAULTKIT, *args], cwd=cwd, env=env or cli_env(),
                          capture_output=True, text=True, input=input, timeout=timeout)
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}, expected {check}\n{proc.stdout}{proc.stderr}"
    return proc
