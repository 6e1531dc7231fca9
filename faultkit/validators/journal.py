"""Write-ahead journal: every change to a running application is recorded, with its undo, before
it is made. An interrupted validation reverts from it; after a SIGKILL, `faultkit recover` does.

One journal per state folder (one platform instance). Each change moves pending -> applied ->
undone; a change still pending may or may not have reached the application, so recovery undoes
pending and applied alike (every undo is idempotent: roll out the baseline build, set the old
value, stop an action).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.errors import FaultkitError, PlatformError
from faultkit.platforms.base import Platform
from faultkit.yamlio import atomic_write


@dataclass
class Journal:
    path: Path

    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {"changes": []}
        try:
            return json.loads(self.path.read_text("utf-8"))
        except ValueError:
            raise FaultkitError(f"{self.path}: the journal is damaged; inspect it, then remove it") from None

    def _write(self, data: dict[str, Any]) -> None:
        atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True) + "\n")

    def open_changes(self) -> list[dict[str, Any]]:
        return [c for c in self._read()["changes"] if c["state"] != "undone"]

    def begin(self, run: str, fault: str) -> None:
        if self.open_changes():
            raise FaultkitError(f"{self.path}: an earlier validation left changes on the application; "
                                "run `faultkit recover` first")
        self._write({"run": run, "fault": fault, "pid": os.getpid(), "started": time.time(), "changes": []})

    def record(self, change: dict[str, Any]) -> int:
        """Record a change about to be made; returns its index. The undo must be in `change`."""
        data = self._read()
        data["changes"].append({**change, "state": "pending", "at": time.time()})
        self._write(data)
        return len(data["changes"]) - 1

    def mark(self, index: int, state: str, **extra: Any) -> None:
        data = self._read()
        data["changes"][index].update(state=state, **extra)
        self._write(data)

    def finish(self) -> None:
        if not self.open_changes():
            self.path.unlink(missing_ok=True)


def undo(platform: Platform, change: dict[str, Any]) -> None:
    """Undo one change; safe to repeat."""
    kind = change["kind"]
    if kind == "rollout":
        platform.rollout(change["service"], change["undo_build"], timeout=change.get("timeout", 90))
    elif kind == "patch":
        platform.patch_field(change["workload"], change["container"], change["field"], change["undo_value"],
                             timeout=change.get("timeout", 90))
    elif kind == "action":
        if change.get("handle"):
            platform.stop_action(change["handle"])
    else:
        raise PlatformError(f"journal: unknown change kind {kind!r}")


def recover(platform: Platform, journal: Journal) -> list[str]:
    """Undo every open change, newest first. Returns a line per change undone."""
    done = []
    data = journal._read()
    for index in reversed(range(len(data["changes"]))):
        change = data["changes"][index]
        if change["state"] == "undone":
            continue
        if change["kind"] == "action" and not change.get("handle"):
            # killed between starting the action and recording its handle: one validation runs at a
            # time on a platform (the journal says so), so every action in force is this run's
            for handle in platform.active_actions():
                platform.stop_action(handle)
            journal.mark(index, "undone")
            done.append(describe(change))
            continue
        undo(platform, change)
        journal.mark(index, "undone")
        done.append(describe(change))
    journal.finish()
    return done


def describe(change: dict[str, Any]) -> str:
    if change["kind"] == "rollout":
        return f"rolled {change['service']} back to {change['undo_build'][:19]}"
    if change["kind"] == "patch":
        return f"restored {change['workload']}/{change['container']} {change['field']} to {change['undo_value']!r}"
    return f"stopped {change.get('action')} on {change.get('service')}"
