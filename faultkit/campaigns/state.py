"""Each fault's state in a campaign folder: DIR/faults/<id>.json, written atomically.

queued -> running -> done. A fault is marked running (with the bundle folder its run writes)
before its validation starts, and done (with the verdict) only after that run has sealed its bundle
and exited, so a crash can only ever leave a fault queued or running; a running one is re-queued
on resume, its unfinished bundle moved aside. Outcomes that are errors to retry (an overloaded
machine, a run that died) go back to queued until the plan's attempts are spent.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from faultkit.errors import InputError, UsageError
from faultkit.yamlio import atomic_write

State = Literal["queued", "running", "done"]
# outcomes a verdict stands on, recorded in the entry by `validate` itself
VERDICTS = ("admitted", "rejected", "flaky")
# outcomes that say nothing about the fault, the run is tried again while attempts remain: the
# machine was saturated, the run stopped on an error of the platform (aborted), or it died
RETRY = ("overloaded", "aborted", "crashed")


@dataclass(frozen=True)
class Attempt:
    outcome: str  # a verdict, "aborted", "overloaded", "crashed" or "interrupted"
    bundle: str | None  # relative to the campaign folder
    detail: str
    worker: int
    wall_s: float


@dataclass(frozen=True)
class FaultState:
    id: str
    state: State = "queued"
    worker: int | None = None
    bundles: str | None = None  # the folder the current run writes its bundle under
    started: float | None = None
    outcome: str | None = None
    verdict: dict[str, Any] | None = None  # status, failed_rules, summary of the final run
    bundle: str | None = None  # the final run's bundle, relative to the campaign folder
    wall_s: float | None = None
    attempts: tuple[Attempt, ...] = field(default_factory=tuple)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaultState:
        data = dict(data)
        data["attempts"] = tuple(Attempt(**a) for a in data.get("attempts", ()))
        return cls(**data)


class FaultStore:
    """The campaign folder's fault states; one writer (the campaign process holding the lock)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.faults = folder / "faults"

    def path(self, fault_id: str) -> Path:
        return self.faults / f"{fault_id}.json"

    def read(self, fault_id: str) -> FaultState:
        try:
            return FaultState.from_dict(json.loads(self.path(fault_id).read_text("utf-8")))
        except FileNotFoundError:
            return FaultState(fault_id)
        except (ValueError, TypeError):
            raise InputError(f"{self.path(fault_id)}: the fault's state is damaged; remove it to validate the "
                             "fault again") from None

    def write(self, s: FaultState) -> FaultState:
        atomic_write(self.path(s.id), json.dumps(asdict(s), indent=1, sort_keys=True) + "\n")
        return s

    def all(self, ids: tuple[str, ...]) -> list[FaultState]:
        return [self.read(i) for i in ids]

    def start(self, s: FaultState, worker: int, bundles: str, now: float) -> FaultState:
        return self.write(replace(s, state="running", worker=worker, bundles=bundles, started=now))

    def finish(self, s: FaultState, attempt: Attempt, verdict: dict[str, Any] | None, attempts_allowed: int
               ) -> FaultState:
        tried = (*s.attempts, attempt)
        spent = sum(a.outcome != "interrupted" for a in tried)  # a stop of the campaign is not the fault's try
        if attempt.outcome in RETRY and spent < attempts_allowed:
            return self.write(replace(s, state="queued", worker=None, bundles=None, started=None, attempts=tried))
        return self.write(replace(s, state="done", worker=None, started=None, outcome=attempt.outcome,
                                  verdict=verdict, bundle=attempt.bundle, wall_s=attempt.wall_s, attempts=tried))

    def requeue(self, s: FaultState, attempt: Attempt) -> FaultState:
        """A run the campaign's own end cut short (a crash, Ctrl-C): no verdict, back in the queue."""
        return self.write(replace(s, state="queued", worker=None, bundles=None, started=None,
                                  attempts=(*s.attempts, attempt)))


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """One campaign process per folder. The kernel drops the lock when its holder dies, SIGKILL
    included, so a resumed campaign never waits on a dead one and never runs beside a live one."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / "campaign.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"{folder}: another campaign process runs on this folder; wait for it, or stop it"
                             ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)
