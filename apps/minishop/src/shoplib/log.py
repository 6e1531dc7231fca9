"""Structured JSON logging: one object per line on stdout, flushed immediately.

A plain print-based logger is used instead of the logging module so that the
output shape is fixed and identical across services (log-based detectors in
faultkit parse it).
"""

import json
import sys
import threading
from datetime import datetime, timezone
from typing import Any, TextIO

from shoplib import trace_ids

_LOCK = threading.Lock()


def _now() -> str:
    # ISO8601 UTC with millisecond precision, e.g. 2024-01-01T12:00:00.123Z
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Logger:
    def __init__(self, service: str, stream: TextIO | None = None) -> None:
        self.service = service
        self.stream = stream

    def log(self, level: str, message: str, **extra: Any) -> None:
        record: dict[str, Any] = {
            "ts": _now(),
            "level": level,
            "service": self.service,
            "message": message,
        }
        record.update(trace_ids.current())
        for key, value in extra.items():
            if key not in record:
                record[key] = value
        line = json.dumps(record, default=str)
        out = self.stream or sys.stdout
        # The lock keeps lines from different threads from interleaving.
        with _LOCK:
            out.write(line + "\n")
            out.flush()

    def info(self, message: str, **extra: Any) -> None:
        self.log("INFO", message, **extra)

    def warning(self, message: str, **extra: Any) -> None:
        self.log("WARNING", message, **extra)

    def error(self, message: str, **extra: Any) -> None:
        self.log("ERROR", message, **extra)
