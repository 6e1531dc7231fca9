"""minishop's LOG_FORMAT=text: logback-style lines, which the declared text format reads back."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from faultkit.apps.logformat import LogFormat
from faultkit.platforms.logline import log_record

SRC = Path(__file__).resolve().parents[2] / "apps" / "minishop" / "src"
sys.path.insert(0, str(SRC))

from shoplib.log import Logger  # noqa: E402

LOGBACK = LogFormat("text", pattern=r"^\S+ \S+ (?P<level>[A-Z]+) \[(?P<thread>[^\]]*)\] (?P<logger>\S+) - "
                                    r"(?P<message>.*)$")


def test_text_lines_are_logback_shaped_and_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOG_FORMAT", "text")
    out = io.StringIO()
    log = Logger("cart", out)
    log.error("cart store request failed: connection refused", path="/cart/u1")
    log.warning("slow store")
    error, warning = out.getvalue().splitlines()
    assert error.endswith(" ERROR [MainThread] minishop.cart - cart store request failed: connection refused")
    records = [log_record(0.0, line, "cart", "cart-0", fmt=LOGBACK) for line in (error, warning)]
    assert [(r.level, r.message) for r in records] == [
        ("ERROR", "cart store request failed: connection refused"), ("WARNING", "slow store")]


def test_json_stays_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOG_FORMAT", raising=False)
    out = io.StringIO()
    Logger("cart", out).error("boom")
    assert log_record(0.0, out.getvalue(), "cart", "cart-0").level == "ERROR"
