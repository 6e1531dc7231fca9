"""The descriptor's `signals.logs`: a log format parsed at the edge, a bad one refused in one line."""

from __future__ import annotations

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.apps.logformat import JSON_LINES, LogFormat
from faultkit.errors import InputError
from tests.helpers.minishop_signals import add_to_signals

LOGBACK = r"^\S+ \S+ (?P<level>[A-Z]+) \[(?P<thread>[^\]]*)\] (?P<logger>\S+) - (?P<message>.*)$"


def _with_signals(ws, block: str) -> None:
    add_to_signals(ws, "  logs:\n" + block)


def test_no_log_format_is_json_lines(ws):
    assert load_app(ws, "minishop").log_format == JSON_LINES == LogFormat()


def test_a_text_format_with_its_pattern_and_levels(ws):
    _with_signals(ws, f"    format: text\n    pattern: '{LOGBACK}'\n    levels: {{Oops: error}}\n")
    fmt = load_app(ws, "minishop").log_format
    assert fmt.format == "text" and fmt.pattern == LOGBACK and fmt.levels == (("Oops", "error"),)
    assert (fmt.level("warn"), fmt.level("SEVERE"), fmt.level("oops"), fmt.level("INFO")) == (
        "WARNING", "ERROR", "ERROR", "INFO")
    assert fmt.describe() == {"format": "text", "pattern": LOGBACK, "levels": {"Oops": "error"}}


def test_logfmt_keys(ws):
    _with_signals(ws, "    format: logfmt\n    level_key: lvl\n")
    fmt = load_app(ws, "minishop").log_format
    assert (fmt.format, fmt.level_key, fmt.message_key) == ("logfmt", "lvl", "message")


@pytest.mark.parametrize(("block", "error"), [
    ("    format: text\n    pattern: '^(?P<level>[A-Z+ (?P<message>.*)$'\n",
     r"app.yaml:\d+: signals.logs.pattern: .* is not a Python regex \("),
    ("    format: text\n    pattern: '^(?P<lvl>\\S+) (?P<message>.*)$'\n",
     r"app.yaml:\d+: signals.logs.pattern: .* has no named group \(\?P<level>\.\.\.\)"),
    ("    format: text\n", r"app.yaml:\d+: signals.logs.pattern: format text needs a pattern"),
    ("    format: json\n    pattern: '(?P<level>x)(?P<message>y)'\n",
     r"app.yaml:\d+: signals.logs.pattern: only a text format has a pattern"),
    ("    format: xml\n", r"app.yaml:\d+: signals.logs.format: "),
])
def test_a_bad_format_is_one_line_naming_file_line_and_path(ws, block, error):
    _with_signals(ws, block)
    with pytest.raises(InputError, match=error) as caught:
        load_app(ws, "minishop")
    assert "\n" not in str(caught.value)


def test_the_pattern_line_is_where_the_pattern_is(ws):
    _with_signals(ws, "    format: text\n    pattern: '^(?P<message>.*)$'\n")
    text = (ws.apps_dir / "minishop" / "app.yaml").read_text()
    line = text.splitlines().index("    pattern: '^(?P<message>.*)$'") + 1
    with pytest.raises(InputError, match=rf"app.yaml:{line}: signals.logs.pattern: "):
        load_app(ws, "minishop")
