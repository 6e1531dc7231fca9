"""One line a service printed, as the protocol's LogRecord, on every platform.

The line is read in the application's declared format (apps/logformat.py; default JSON lines):
a JSON object line is a structured log (its level and `message`/`msg`, the rest as fields), a
logfmt line likewise, a text line by the format's pattern. A line that is none of these is INFO,
or ERROR when it carries a traceback's or an error's mark; in a text format it continues the record
before it instead, when there is one (`log_records`). The platform's own event lines are always
JSON, whatever the application's format.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Iterable

from faultkit.apps.logformat import JSON_LINES, LogFormat
from faultkit.platforms.base import LogRecord

TRACEBACK_MARKS = ("Traceback (most recent call last)", "Error:", "Exception:")


def log_record(ts: float, raw: str, service: str, instance: str, event: bool = False,
               fmt: LogFormat = JSON_LINES) -> LogRecord:
    """`event`: a line the platform wrote about the instance (an exit, an OOM kill), flagged in its fields."""
    return _parsed(ts, raw.rstrip("\n"), service, instance, event, fmt) or plain(ts, raw.rstrip("\n"), service,
                                                                                 instance)


def log_records(lines: Iterable[tuple[float, str, bool]], service: str, instance: str,
                fmt: LogFormat = JSON_LINES) -> list[LogRecord]:
    """(ts, raw, event) lines of one instance, in order, as records. In a text format a line the pattern
    does not match joins the message of the application's record before it (a stack trace's lines)."""
    out: list[LogRecord] = []
    joinable = False  # the last record is the application's, read by the pattern
    for ts, raw, event in lines:
        raw = raw.rstrip("\n")
        record = _parsed(ts, raw, service, instance, event, fmt)
        if record is None and joinable and fmt.format == "text":
            out[-1] = dataclasses.replace(out[-1], message=f"{out[-1].message}\n{raw}")
            continue
        out.append(record or plain(ts, raw, service, instance))
        joinable = record is not None and not event
    return out


def log_source(source: str, fmt: LogFormat) -> dict[str, object]:
    """Where log records are read ("files", "pods", "otlp") and in what format, as a window's `sources` records it."""
    return {"source": source, **fmt.describe()}


def plain(ts: float, raw: str, service: str, instance: str) -> LogRecord:
    level = "ERROR" if any(m in raw for m in TRACEBACK_MARKS) else "INFO"
    return LogRecord(ts, service, instance, level, raw, {})


def _parsed(ts: float, raw: str, service: str, instance: str, event: bool, fmt: LogFormat) -> LogRecord | None:
    """The record the line is in its format, None when it is not one (a plain line)."""
    if event or fmt.format == "json":
        return _json(ts, raw, service, instance, event, JSON_LINES if event else fmt)
    if fmt.format == "logfmt":
        return _logfmt(ts, raw, service, instance, fmt)
    match = fmt.regex.match(raw) if fmt.regex else None
    if match is None:
        return None
    fields = {k: v for k, v in match.groupdict().items() if k not in ("level", "message") and v is not None}
    return LogRecord(ts, service, instance, fmt.level(match["level"] or "INFO"), match["message"] or "", fields)


def _json(ts: float, raw: str, service: str, instance: str, event: bool, fmt: LogFormat) -> LogRecord | None:
    if not raw.startswith("{"):
        return None
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    level = fmt.level(obj.pop(fmt.level_key, "INFO"))
    message = str(obj.pop(fmt.message_key, obj.pop("msg", "")))
    if event:
        obj["event"] = obj.get("event", True)
    return LogRecord(ts, service, instance, level, message, obj)


def _logfmt(ts: float, raw: str, service: str, instance: str, fmt: LogFormat) -> LogRecord | None:
    try:
        tokens = shlex.split(raw, posix=True)  # logfmt's quoting: "a b", with \" and \\ inside
    except ValueError:
        return None
    pairs = dict(t.split("=", 1) for t in tokens if "=" in t)
    if fmt.level_key not in pairs and fmt.message_key not in pairs and "msg" not in pairs:
        return None  # a plain line that happens to hold an `=`
    level = fmt.level(pairs.pop(fmt.level_key, "INFO"))
    message = pairs.pop(fmt.message_key, pairs.pop("msg", ""))
    return LogRecord(ts, service, instance, level, message, dict(pairs))
