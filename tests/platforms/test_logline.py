"""Log lines in each declared format as records (logline.py), the way both platforms read them."""

from __future__ import annotations

from faultkit.apps.logformat import JSON_LINES, LogFormat
from faultkit.platforms.logline import log_record, log_records

LOGBACK = LogFormat("text", pattern=r"^\S+ \S+ (?P<level>[A-Z]+) \[(?P<thread>[^\]]*)\] (?P<logger>\S+) - "
                                    r"(?P<message>.*)$")
JAVA = [
    "2026-12-03 10:00:00.123 INFO [main] c.e.Shop - started in 2.1 s",
    "2026-12-03 10:00:01.456 ERROR [http-nio-8080-exec-1] c.e.Foo - payment refused",
    "java.lang.IllegalStateException: card declined",
    "\tat com.example.Foo.pay(Foo.java:42)",
    "Caused by: java.net.ConnectException: Connection refused",
    "2026-12-03 10:00:02.000 WARN [http-nio-8080-exec-2] c.e.Foo - retrying",
]


def test_a_logback_line_is_an_error_under_its_pattern_and_info_as_json_lines():
    line = JAVA[1]
    rec = log_record(1.0, line, "pay", "pay-0", fmt=LOGBACK)
    assert (rec.level, rec.message) == ("ERROR", "payment refused")
    assert rec.fields == {"thread": "http-nio-8080-exec-1", "logger": "c.e.Foo"}
    assert log_record(1.0, line, "pay", "pay-0").level == "INFO"  # what rules v4 saw of it


def test_a_stack_trace_continues_the_record_that_logged_it():
    recs = log_records([(float(i), line, False) for i, line in enumerate(JAVA)], "pay", "pay-0", LOGBACK)
    assert [(r.ts, r.level) for r in recs] == [(0.0, "INFO"), (1.0, "ERROR"), (5.0, "WARNING")]
    assert recs[1].message.splitlines() == ["payment refused", *JAVA[2:5]]


def test_a_line_before_any_record_and_the_platforms_events_stand_alone():
    lines = [(0.0, "Exception: before the first record", False), (1.0, JAVA[1], False),
             (2.0, '{"level": "ERROR", "message": "exited with status 1", "source": "faultkit-local"}', True),
             (3.0, "\tat com.example.Foo.pay(Foo.java:42)", False)]
    recs = log_records(lines, "pay", "pay-0", LOGBACK)
    assert [(r.level, r.message) for r in recs] == [
        ("ERROR", "Exception: before the first record"), ("ERROR", "payment refused"),
        ("ERROR", "exited with status 1"), ("INFO", "\tat com.example.Foo.pay(Foo.java:42)")]
    assert recs[2].fields["event"] is True


def test_logfmt_lines():
    fmt = LogFormat("logfmt")
    rec = log_record(1.0, 'ts=2026-12-03T10:00:00Z level=error msg="payment \\"refused\\"" order=42', "p", "p-0",
                     fmt=fmt)
    assert (rec.level, rec.message, rec.fields) == ("ERROR", 'payment "refused"', {"ts": "2026-12-03T10:00:00Z",
                                                                                    "order": "42"})
    assert log_record(1.0, "level=warn msg=slow", "p", "p-0", fmt=fmt).level == "WARNING"
    assert log_record(1.0, "listening on port=8080", "p", "p-0", fmt=fmt).level == "INFO"  # no level or msg: plain
    assert log_record(1.0, 'msg="unclosed', "p", "p-0", fmt=fmt).message == 'msg="unclosed'
    assert log_record(1.0, "panic: Error: boom", "p", "p-0", fmt=fmt).level == "ERROR"


def test_json_keys_and_levels():
    fmt = LogFormat("json", level_key="severity", message_key="text")
    rec = log_record(1.0, '{"severity": "warn", "text": "slow", "msg": "x", "n": 1}', "p", "p-0", fmt=fmt)
    assert (rec.level, rec.message, rec.fields) == ("WARNING", "slow", {"n": 1})
    # the default keeps minishop's lines as they were read: `message`, else `msg`
    assert log_record(1.0, '{"level": "error", "msg": "boom"}', "p", "p-0", fmt=JSON_LINES).message == "boom"
    assert log_record(1.0, "Traceback (most recent call last):", "p", "p-0").level == "ERROR"
    # JSON lines have no continuation: a traceback's lines stand alone as they always did
    assert len(log_records([(0.0, '{"level": "ERROR", "message": "x"}', False), (1.0, "  File x", False)],
                           "p", "p-0")) == 2
