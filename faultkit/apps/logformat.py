"""How an application's log lines are shaped: the descriptor's `signals.logs` part, as a typed record.

Three formats:

- `json` (the default): one object a line; its `level_key` (default `level`) and `message_key`
  (default `message`, falling back to `msg`) are the level and the message.
- `logfmt`: `level=error msg="payment refused" order=42`, read with the same keys (quoted values
  as Go's logfmt writes them, `\\"` inside quotes).
- `text`: a Python regex `pattern` with the named groups `level` and `message`, e.g. logback's
  `%d %level [%thread] %logger - %msg` as
  `^\\S+ \\S+ (?P<level>[A-Z]+) \\[(?P<thread>[^\\]]*)\\] (?P<logger>\\S+) - (?P<message>.*)$`.
  A line the pattern does not match continues the record before it (a Java stack trace's `at ...`
  and `Caused by: ...` lines join its message, one line each), so a stack trace is one record with
  the level of the line that logged it.

Levels are upper-cased and mapped to the names the screening rules read (LEVELS: WARN is WARNING,
SEVERE and FATAL are ERROR, ...); `levels` in the descriptor adds to or overrides that table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from faultkit.errors import InputError

FORMATS = ("json", "logfmt", "text")
# other frameworks' level names -> the names the rules read (ERROR, CRITICAL and FATAL count as errors)
LEVELS: Mapping[str, str] = {
    "WARN": "WARNING", "SEVERE": "ERROR", "FATAL": "ERROR", "ERR": "ERROR", "EMERG": "CRITICAL",
    "ALERT": "CRITICAL", "CRIT": "CRITICAL", "PANIC": "CRITICAL", "NOTICE": "INFO", "INFORMATION": "INFO",
    "CONFIG": "INFO", "FINE": "DEBUG", "FINER": "DEBUG", "FINEST": "DEBUG", "TRACE": "DEBUG",
}
NEEDED_GROUPS = ("level", "message")


@dataclass(frozen=True)
class LogFormat:
    """One application's log line shape (the default: minishop's JSON lines)."""

    format: str = "json"  # one of FORMATS
    level_key: str = "level"
    message_key: str = "message"
    pattern: str | None = None  # text only: a regex with the named groups `level` and `message`
    levels: tuple[tuple[str, str], ...] = field(default=())  # the descriptor's additions to LEVELS

    @cached_property
    def regex(self) -> re.Pattern[str] | None:
        return re.compile(self.pattern) if self.pattern is not None else None

    @cached_property
    def level_map(self) -> dict[str, str]:
        return {**LEVELS, **{k.upper(): v.upper() for k, v in self.levels}}

    def level(self, raw: object) -> str:
        name = str(raw).strip().upper()
        return self.level_map.get(name, name)

    def describe(self) -> dict[str, Any]:
        """The format as a window's `sources` records it: what a reader needs to parse the lines again."""
        out: dict[str, Any] = {"format": self.format}
        if self.format == "text":
            out["pattern"] = self.pattern
        else:
            out.update(level_key=self.level_key, message_key=self.message_key)
        if self.levels:
            out["levels"] = dict(self.levels)
        return out


JSON_LINES = LogFormat()


def log_format(data: Mapping[str, Any] | None) -> LogFormat:
    """The format from the descriptor's (schema-checked) `signals.logs`; a pattern that does not
    compile, or lacks a named group the rules need, is an InputError naming the key at fault:
    "pattern: ..." (the descriptor prefixes its file, line and path)."""
    if not data:
        return JSON_LINES
    fmt = LogFormat(format=str(data.get("format", "json")), level_key=str(data.get("level_key", "level")),
                    message_key=str(data.get("message_key", "message")), pattern=data.get("pattern"),
                    levels=tuple(sorted((str(k), str(v)) for k, v in (data.get("levels") or {}).items())))
    if fmt.format == "text":
        _check_pattern(fmt.pattern)
    elif fmt.pattern is not None:
        raise InputError(f"pattern: only a text format has a pattern (this one is {fmt.format}); "
                         "set format: text, or drop the pattern")
    return fmt


def _check_pattern(pattern: str | None) -> None:
    if pattern is None:
        raise InputError("pattern: format text needs a pattern, a regex with the named groups "
                         "(?P<level>...) and (?P<message>...)")
    try:
        compiled = re.compile(pattern)
    except re.error as e:
        raise InputError(f"pattern: {pattern!r} is not a Python regex ({e})") from None
    missing = [g for g in NEEDED_GROUPS if g not in compiled.groupindex]
    if missing:
        raise InputError(f"pattern: {pattern!r} has no named group {', '.join(f'(?P<{g}>...)' for g in missing)}; "
                         "the level and the message are read from those")
