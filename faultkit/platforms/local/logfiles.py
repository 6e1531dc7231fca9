"""Instance log files: each line is `<receive ts> <o|e> <raw line>`.

`o` lines are the process's stdout+stderr as written; `e` lines are the platform's own events
(exits, OOM kills, restarts), JSON objects like the services' structured logs. The receive
timestamp lets logs be filtered by time whatever the process printed.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import IO

from faultkit.apps.logformat import JSON_LINES, LogFormat
from faultkit.platforms.base import LogRecord
from faultkit.platforms.logline import log_record, log_records


class LogWriter:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh = open(path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._lock = threading.Lock()

    def line(self, raw: str, kind: str = "o") -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.write(f"{time.time():.6f} {kind} {raw.rstrip(chr(10))}\n")
                self._fh.flush()

    def event(self, level: str, message: str, **fields: object) -> None:
        self.line(
            json.dumps({"level": level, "message": message, "source": "faultkit-local", **fields}),
            "e",
        )

    def pump(self, stream: IO[bytes]) -> None:
        """Copy a process's output into the log until it closes (run in a thread)."""
        for raw in iter(stream.readline, b""):
            self.line(raw.decode("utf-8", errors="replace"))
        stream.close()

    def close(self) -> None:
        with self._lock:
            self._fh.close()


def split_line(line: str) -> tuple[float, str, bool] | None:
    """(receive ts, raw line, is the platform's event) of a log file line; None for a torn one."""
    ts_text, _, rest = line.partition(" ")
    kind, _, raw = rest.partition(" ")
    try:
        return float(ts_text), raw, kind == "e"
    except ValueError:
        return None


def parse_line(line: str, service: str, instance: str, fmt: LogFormat = JSON_LINES) -> LogRecord | None:
    split = split_line(line)
    return log_record(split[0], split[1], service, instance, split[2], fmt) if split else None


def read_records(path: Path, service: str, instance: str, since: float, until: float | None,
                 fmt: LogFormat = JSON_LINES) -> list[LogRecord]:
    """The file's records received in [since, until], its lines read in the app's format (a text
    format's continuation lines join the record before them, which then counts at its own time)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = [s for s in map(split_line, fh) if s is not None]
    return [r for r in log_records(lines, service, instance, fmt)
            if r.ts >= since and (until is None or r.ts <= until)]


def tail(path: Path, n: int = 10) -> list[str]:
    """The last n raw lines of a log (without the timestamp and kind)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[-n:]
    except FileNotFoundError:
        return []
    return [ln.split(" ", 2)[2] if ln.count(" ") >= 2 else ln for ln in lines]
