"""Where the local platform keeps its runtime state: state_dir/local/..."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypedDict

import psutil

# The module `faultkit up` runs the supervisor as; a pid whose command line lacks it is not ours.
DAEMON_MODULE = "faultkit.platforms.local.daemon"


class SupervisorInfo(TypedDict):
    """state_dir/local/supervisor.json: where the running supervisor answers."""

    pid: int
    port: int
    token: str
    app: str
    started: float  # seconds since the epoch


class LocalState:
    def __init__(self, state_dir: Path) -> None:
        self.base = state_dir / "local"

    @property
    def info_path(self) -> Path:
        return self.base / "supervisor.json"

    @property
    def builds(self) -> Path:
        return self.base / "builds"

    @property
    def logs(self) -> Path:
        return self.base / "logs"

    @property
    def deployed(self) -> Path:
        return self.base / "deployed"

    @property
    def pids(self) -> Path:
        return self.base / "pids.jsonl"

    @property
    def supervisor_log(self) -> Path:
        return self.base / "supervisor.log"

    def write_info(self, info: SupervisorInfo) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        tmp = self.info_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds the token
        with os.fdopen(fd, "w") as fh:
            json.dump(info, fh)
        os.replace(tmp, self.info_path)

    def read_info(self) -> SupervisorInfo | None:
        """The running supervisor's address, or None when none runs (a stale file is ignored)."""
        try:
            info: SupervisorInfo = json.loads(self.info_path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        try:
            proc = psutil.Process(int(info["pid"]))
            if proc.status() == psutil.STATUS_ZOMBIE or DAEMON_MODULE not in " ".join(proc.cmdline()):
                return None
        except (psutil.Error, KeyError, ValueError):
            return None
        return info

    def remove_info(self, pid: int | None = None) -> None:
        try:
            if pid is None or json.loads(self.info_path.read_text()).get("pid") == pid:
                self.info_path.unlink()
        except (FileNotFoundError, ValueError):
            pass
