"""Every subprocess goes through here, so every failure shows the command, exit code and output."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from faultkit.errors import FaultkitError


@dataclass(frozen=True)
class ProcessResult:
    command: tuple[str, ...]
    code: int
    output: str

    @property
    def ok(self) -> bool:
        return self.code == 0

    def tail(self, lines: int = 20) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])


def python_command(cmd: Sequence[str]) -> list[str]:
    """Manifests and descriptors say `python3`; run it with the interpreter faultkit runs on."""
    return [sys.executable, *cmd[1:]] if cmd and cmd[0] in ("python", "python3") else list(cmd)


def _die_with_parent() -> None:
    """A child (a service's test run, say) must not outlive faultkit killed with SIGKILL."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass  # not Linux: the child is left to finish by itself


def run(cmd: Sequence[str], cwd: Path, timeout: float = 300, env: Mapping[str, str] | None = None) -> ProcessResult:
    command = python_command(cmd)
    full_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    try:
        proc = subprocess.run(command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=_die_with_parent)
    except FileNotFoundError:
        raise FaultkitError(f"{command[0]}: command not found (running {' '.join(cmd)} in {cwd})") from None
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or "") if isinstance(e.stdout, str) else (e.stdout or b"").decode(errors="replace")
        return ProcessResult(tuple(cmd), 124, out + f"\n(timed out after {timeout:g} s)")
    return ProcessResult(tuple(cmd), proc.returncode, proc.stdout + proc.stderr)
