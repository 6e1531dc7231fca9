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

from faultkit.platforms.base import LogRecord
from faultkit.platforms.logline import log_record


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


def parse_line(line: str, service: str, instance: str) -> LogRecord | None:
    ts_text, _, rest = line.partition(" ")
    kind, _, raw = rest.partition(" ")
    try:
        ts = float(ts_text)
    except ValueError:
        return None
    return log_record(ts, raw, service, instance, event=kind == "e")


def read_records(path: Path, service: str, instance: str, since: float, until: float | None) -> list[LogRecord]:
    out: list[LogRecord] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            rec = parse_line(line, service, instance)
            if rec is None or rec.ts < since or (until is not None and rec.ts > until):
                continue
            out.append(rec)
    return out


def tail(path: Path, n: int = 10) -> list[str]:
    """The last n raw lines of a log (without the timestamp and kind)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[-n:]
    except FileNotFoundError:
        return []
    return [ln.split(" ", 2)[2] if ln.count(" ") >= 2 else ln for ln in lines]
