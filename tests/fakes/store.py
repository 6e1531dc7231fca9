"""The fake platform's state: one JSON document, in memory or in a file two processes share.

In a file (a test that SIGKILLs a validation and recovers from another process), every change is
a read-modify-write under an exclusive lock, written to a temporary file and moved into place, so
a process killed at any point leaves the last whole state behind, as a real platform would.
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

State = dict[str, Any]


def empty() -> State:
    return {"app": None, "docs": [], "manifest": [], "builds": {}, "build_dirs": {}, "instances": [],
            "actions": {}, "next_handle": 1, "next_instance": {}, "counts": {}, "logs": [], "tick": None,
            "effects_on": [], "served": {}, "behaviours": [], "rollout_s": 0.0, "rolling": None}


class Store:
    """The state behind a fake platform. `path` None: in memory, for one process."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._memory: State = empty()
        self._lock = threading.RLock()
        self._depth = 0

    @contextmanager
    def change(self) -> Iterator[State]:
        """The state to change in place; saved when the block ends without an error."""
        with self._lock, self._file_lock():
            state = self._load()
            yield state
            self._save(state)

    def read(self) -> State:
        with self._lock, self._file_lock():
            return copy.deepcopy(self._load())

    @contextmanager
    def _file_lock(self) -> Iterator[None]:
        # reentrant, like the thread lock it sits under: a second flock of the file from this process
        # would wait for the first forever
        if self.path is None or self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            self._depth = 1
            try:
                yield
            finally:
                self._depth = 0
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _load(self) -> State:
        if self.path is None:
            return self._memory
        if not self.path.exists():
            return empty()
        data: State = json.loads(self.path.read_text("utf-8"))
        return data

    def _save(self, state: State) -> None:
        if self.path is None:
            self._memory = state
            return
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state, sort_keys=True), "utf-8")
        os.replace(tmp, self.path)
