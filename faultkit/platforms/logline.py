"""One line a service printed, as the protocol's LogRecord, on every platform.

A JSON object line is a structured log (its `level` and `message`/`msg`, the rest as fields);
any other line is INFO, or ERROR when it carries a traceback's or an error's mark.
"""

from __future__ import annotations

import json

from faultkit.platforms.base import LogRecord

TRACEBACK_MARKS = ("Traceback (most recent call last)", "Error:", "Exception:")


def log_record(ts: float, raw: str, service: str, instance: str, event: bool = False) -> LogRecord:
    """`event`: a line the platform wrote about the instance (an exit, an OOM kill), flagged in its fields."""
    raw = raw.rstrip("\n")
    if raw.startswith("{"):
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            level = str(obj.pop("level", "INFO")).upper()
            message = str(obj.pop("message", obj.pop("msg", "")))
            if event:
                obj["event"] = obj.get("event", True)
            return LogRecord(ts, service, instance, level, message, obj)
    level = "ERROR" if any(m in raw for m in TRACEBACK_MARKS) else "INFO"
    return LogRecord(ts, service, instance, level, raw, {})
