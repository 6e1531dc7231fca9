"""The stack's processes: each started in a session (process group) of its own with a log, tracked
by pid and start time so a reused pid is never taken for it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from .layout import Layout


def _pidfile(layout: Layout, name: str) -> Path:
    return layout.run / f"{name}.pid"


def log_path(layout: Layout, name: str) -> Path:
    return layout.logs / f"{name}.log"


def _started(pid: int) -> int:
    """When the process started, in clock ticks since boot (/proc/PID/stat field 22): unlike a wall
    clock time, it does not move when the clock is adjusted."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def start(layout: Layout, name: str, argv: list[str], env: Mapping[str, str]) -> int:
    with open(log_path(layout, name), "ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                cwd=layout.state, env=dict(env), start_new_session=True)
    _pidfile(layout, name).write_text(f"{proc.pid} {_started(proc.pid)}\n")
    return proc.pid


def pid(layout: Layout, name: str) -> int | None:
    """The pid of a running process of the stack, or None (never started, exited, or pid reused)."""
    path = _pidfile(layout, name)
    try:
        pid_text, started_text = path.read_text().split()
        number = int(pid_text)
        stat = Path(f"/proc/{number}/stat").read_text()
        if _started(number) != int(started_text) or stat.rsplit(")", 1)[1].split()[0] == "Z":
            return None
    except (OSError, ValueError):
        return None
    return number


def recorded(layout: Layout, name: str) -> bool:
    return _pidfile(layout, name).is_file()


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop(layout: Layout, name: str, timeout: float = 15.0) -> None:
    """SIGTERM the process group, SIGKILL what is left after `timeout` seconds, forget the pid."""
    number = pid(layout, name)
    if number is not None:
        # The process leads its own session, so its group id is its pid; the group takes any child too.
        _signal_group(number, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while group_alive(number) and time.monotonic() < deadline:
            _reap(number)
            time.sleep(0.1)
        if group_alive(number):
            _signal_group(number, signal.SIGKILL)
            while group_alive(number) and time.monotonic() < deadline + 5:
                _reap(number)
                time.sleep(0.1)
    _pidfile(layout, name).unlink(missing_ok=True)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _reap(number: int) -> None:
    """A process this very Python started stays a zombie (and its group alive) until waited for."""
    try:
        os.waitpid(number, os.WNOHANG)
    except ChildProcessError:
        pass
