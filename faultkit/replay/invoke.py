"""One run of the --invoke command: a fresh process in its own process group, shell-free argv,
killed with its whole group once past the budget."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.errors import UsageError


def argv(command: str) -> list[str]:
    try:
        out = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"--invoke {command!r}: {e}; quote it as a shell would") from None
    if not out:
        raise UsageError("--invoke is empty; give the command an agent invocation runs")
    return out


@dataclass
class Invocation:
    """A started command; `poll` enforces the budget, `result` is its record."""

    number: int
    proc: subprocess.Popen[bytes]
    started: float
    budget_s: float
    killed: bool = False
    ended: float | None = None

    @classmethod
    def start(cls, command: list[str], number: int, workspace: Path, log: Path, budget_s: float,
              env: dict[str, str]) -> Invocation:
        full = {**env, "FAULTKIT_INVOCATION": str(number), "FAULTKIT_WORKSPACE": str(workspace)}
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            proc = subprocess.Popen(command, cwd=workspace, env=full, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        return cls(number, proc, time.time(), budget_s)

    def poll(self) -> bool:
        """True once the command has ended (by itself or killed past its budget)."""
        if self.ended is not None:
            return True
        if self.proc.poll() is not None:
            self.ended = time.time()
            return True
        if time.time() - self.started > self.budget_s:
            self.kill()
            return True
        return False

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.killed = True
        self.proc.wait()
        # the group may hold children the leader left behind
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.ended = self.ended or time.time()

    def result(self) -> dict[str, Any]:
        return {"started": round(self.started, 3), "ended": round(self.ended or time.time(), 3),
                "exit": self.proc.returncode, "killed": self.killed, "budget_s": self.budget_s}
