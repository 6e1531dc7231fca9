"""Write-ahead journal: every change to a running application is recorded, with its undo, before
it is made. An interrupted validation reverts from it; after a SIGKILL, `faultkit recover` does.

One journal per state folder (one platform instance). Each change moves pending -> applied ->
undone; a change still pending may or may not have reached the application, so recovery undoes
pending and applied alike (every undo is idempotent: roll out the baseline build, set the old
value, stop an action). The journal stores the change values of validators/app_changes.py in their
JSON spelling, with the state beside them; undoing and describing are theirs.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

from faultkit.errors import FaultkitError, PlatformError
from faultkit.platforms.base import Platform
from faultkit.validators.app_changes import Change, from_json
from faultkit.yamlio import atomic_write

State = Literal["pending", "applied", "undone"]


class JournalFile(TypedDict, total=False):
    run: str
    fault: str
    pid: int
    started: float
    target: dict[str, str]  # the platform (and cluster, context, namespace) the changes were made on
    changes: list[dict[str, Any]]  # a change's JSON, plus "state" and "at"


@dataclass(frozen=True)
class Journalled:
    """One change as the journal holds it."""

    index: int
    change: Change
    state: State
    at: float


@dataclass
class Journal:
    path: Path

    def _read(self) -> JournalFile:
        if not self.path.exists():
            return {"changes": []}
        try:
            data: JournalFile = json.loads(self.path.read_text("utf-8"))
        except ValueError:
            raise FaultkitError(f"{self.path}: the journal is damaged; inspect it, then remove it") from None
        return data

    def _write(self, data: JournalFile) -> None:
        atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True) + "\n")

    def entries(self) -> list[Journalled]:
        return [Journalled(i, from_json(c), c["state"], c["at"]) for i, c in enumerate(self._read()["changes"])]

    def open_changes(self) -> list[Journalled]:
        """Changes that may still be on the application, oldest first."""
        return [j for j in self.entries() if j.state != "undone"]

    def begin(self, run: str, fault: str, target: dict[str, str] | None = None) -> None:
        if self.open_changes():
            raise FaultkitError(f"{self.path}: an earlier validation left changes on the application; "
                                "run `faultkit recover` first")
        data: JournalFile = {"run": run, "fault": fault, "pid": os.getpid(), "started": time.time(), "changes": []}
        if target:
            data["target"] = dict(target)
        self._write(data)

    def target(self) -> dict[str, str] | None:
        """Where the journalled changes were made (None in journals written before it was recorded)."""
        return self._read().get("target")

    def record(self, change: Change) -> int:
        """Record a change about to be made (its JSON holds its undo); returns its index."""
        data = self._read()
        data["changes"].append({**change.to_json(), "state": "pending", "at": time.time()})
        self._write(data)
        return len(data["changes"]) - 1

    def mark(self, index: int, state: State, change: Change | None = None) -> None:
        """Move a change to `state`; `change`, when given, is what apply returned (with its handle)."""
        data = self._read()
        if change is not None:
            data["changes"][index].update(change.to_json())
        data["changes"][index]["state"] = state
        self._write(data)

    def finish(self) -> None:
        if not self.open_changes():
            self.path.unlink(missing_ok=True)


def recover(platform: Platform, journal: Journal) -> list[str]:
    """Undo every open change, newest first. Returns a line per change undone. Refuses a platform
    that is not the one the changes were made on (another platform, cluster, context or namespace)."""
    recorded = journal.target()
    if recorded is not None:
        here = platform.target()
        if here != recorded:
            raise PlatformError(f"{journal.path}: the changes were made on {_where(recorded)}, not on "
                                f"{_where(here)}; recover on that target (e.g. --platform {recorded.get('platform')})")
    done = []
    for item in reversed(journal.open_changes()):
        item.change.undo(platform)
        check = item.change.undone(platform)  # read back: an undo that left something is no recovery
        if not check.ok:
            raise PlatformError(f"recovery failed: {check.detail}; the change stays open in {journal.path}")
        journal.mark(item.index, "undone")
        done.append(item.change.describe())
    journal.finish()
    return done


def _where(target: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(target.items()))
