"""Structured JSON logging: one object per line on stdout, flushed immediately.

A plain print-based logger is used instead of the logging module so that the
output shape is fixed and identical across services (log-based detectors in
faultkit parse it).

LOG_FORMAT=text prints logback-style text lines instead, as a Java service's
`%d %level [%thread] %logger - %msg` pattern would (text_line), so faultkit's
text log formats are tested on a real service's output.
"""

import json
import os
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
        line = format_line(record)
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


def format_line(record: dict[str, Any]) -> str:
    """One JSON object, or with LOG_FORMAT=text a logback-style line."""
    if os.environ.get("LOG_FORMAT") == "text":
        return text_line(record)
    return json.dumps(record, default=str)


def text_line(record: dict[str, Any]) -> str:
    """The record as logback's `%d{yyyy-MM-dd HH:mm:ss.SSS} %level [%thread] %logger - %msg`
    prints it, e.g. `2026-12-03 10:00:00.123 ERROR [Thread-3] minishop.cart - store down`;
    the record's other fields are left out, as %msg leaves out a Java logger's MDC, and WARNING
    is logback's WARN."""
    stamp = str(record["ts"]).replace("T", " ").rstrip("Z")
    level = "WARN" if record["level"] == "WARNING" else record["level"]
    thread = threading.current_thread().name
    return f"{stamp} {level} [{thread}] minishop.{record['service']} - {record['message']}"
