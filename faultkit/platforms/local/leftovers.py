"""What a stopped local action may have left behind, read back from the machine (issue 29).

A stopped action is only stopped once nothing of it remains: no process carrying its mark (every
helper an action starts gets `ACTION_ENV=<handle>` in its environment, which its children inherit
even when they leave the helper's process group), no instance of its still frozen (SIGSTOP), no
relay still delaying or dropping. Each leftover is one line naming what remains.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

ACTION_ENV = "FAULTKIT_ACTION"


def marked_pids(handle: str, proc: Path = Path("/proc")) -> list[int]:
    """Live processes whose environment carries the action's mark (zombies are gone already)."""
    mark = f"{ACTION_ENV}={handle}".encode()
    out = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark in (entry / "environ").read_bytes().split(b"\0") and state(int(entry.name), proc) != "Z":
                out.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return sorted(out)


def state(pid: int, proc: Path = Path("/proc")) -> str | None:
    """The process's state letter (R, S, T stopped, Z zombie...), None when it is gone."""
    try:
        return (proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def process_leftovers(handle: str) -> list[str]:
    return [f"process {pid} of {handle} still runs" for pid in marked_pids(handle)]


def frozen_leftovers(pids: Iterable[tuple[str, int]]) -> list[str]:
    """(instance, pid) pairs an instance-failure stopped: any still stopped is a leftover."""
    return [f"instance {inst} (pid {pid}) is still frozen" for inst, pid in pids if state(pid) in ("T", "t")]


def marked_env(handle: str) -> dict[str, str]:
    return {**os.environ, ACTION_ENV: handle}
