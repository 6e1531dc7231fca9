"""alert-raised on hand-built windows: an alert of the pack that fires after the change and not
before; recorded whenever both windows hold alerts, deciding only where the run's inputs ask."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from faultkit.errors import InputError, UsageError
from faultkit.observe.window import Window
from faultkit.validators.alert_rule import required
from faultkit.validators.judge import judge, outcome
from faultkit.validators.params import ValidationParams
from tests.validators import windows as w

ERRORS = {"alert": "ServiceErrorRatioHigh", "labels": {"service_name": "frontend"}}


def alerts(*fired: dict[str, Any], pending: tuple[dict[str, Any], ...] = (), polls: int = 3,
           failed: int = 0) -> dict[str, Any]:
    rows = [{**a, "state": "firing", "active_at": 1.0, "first_seen": 2.0, "last_seen": 3.0, "firing_seen": 2.0}
            for a in fired]
    rows += [{**a, "state": "pending", "active_at": 1.0, "first_seen": 2.0, "last_seen": 3.0} for a in pending]
    out = {"source": "http://127.0.0.1:9090", "polls": polls, "failed_polls": failed, "alerts": rows}
    if failed:
        out["error"] = "ConnectionError: refused"
    return out


def run(before_alerts: dict | None, after_alerts: dict | None, decide: bool = False) -> dict[str, Any]:
    windows: dict[str, Window] = {}

    def with_alerts(window: Window, record: dict | None) -> Window:
        return window if record is None else {**window, "alerts": record}  # type: ignore[typeddict-item]

    t0 = 2000.0
    record = w.cycle(1, windows,
                     before=with_alerts(w.window("before-1", w.HEALTHY, t0=t0), before_alerts),
                     after=with_alerts(w.window("after-1", w.FAILING, t0=t0 + 100, logs=w.failing_after()),
                                       after_alerts))
    inputs = w.inputs()
    if decide:
        inputs["params"]["alert_raised"] = True
    return judge(inputs, w.stages([record]), windows)


def rule(verdict: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in verdict["rules"] if r["rule"] == "alert-raised"), None)


def test_an_alert_that_fires_after_and_not_before_is_raised():
    v = run(alerts(), alerts(ERRORS, pending=({"alert": "ServiceLatencyHigh", "labels": {}},)))
    r = rule(v)
    assert r is not None and r["passed"] and (r["measured"], r["threshold"]) == (1, 1)
    assert r["detail"].endswith("ServiceErrorRatioHigh{service_name=frontend}")  # pending is not raised
    assert v["status"] == "admitted" and outcome(r, v) == "pass"


def test_an_alert_already_firing_before_is_not_raised_by_the_fault():
    v = run(alerts(ERRORS), alerts(ERRORS))
    r = rule(v)
    assert r is not None and not r["passed"] and r["measured"] == 0
    # the catalog does not ask: reported, and the verdict is as without it
    assert v["status"] == "admitted" and v["failed_rules"] == [] and outcome(r, v) == "not met"


def test_the_same_alert_for_another_service_is_another_alert():
    other = {"alert": "ServiceErrorRatioHigh", "labels": {"service_name": "cart"}}
    assert rule(run(alerts(ERRORS), alerts(ERRORS, other)))["measured"] == 1


def test_where_the_catalog_asks_no_alert_rejects():
    v = run(alerts(), alerts(), decide=True)
    assert v["status"] == "rejected" and v["failed_rules"] == ["alert-raised"]
    assert outcome(rule(v), v) == "FAIL"
    assert run(alerts(), alerts(ERRORS), decide=True)["status"] == "admitted"


def test_a_prometheus_that_never_answered_is_named():
    r = rule(run(alerts(failed=3), alerts(failed=3)))
    assert not r["passed"] and r["detail"] == "no poll of http://127.0.0.1:9090 was answered: ConnectionError: refused"


def test_windows_without_alerts_get_no_rule_so_earlier_bundles_judge_as_sealed():
    assert rule(run(None, None)) is None
    assert run(None, None) == run(None, None, decide=False)


def test_the_catalog_setting_and_its_refusals(tmp_path: Path):
    assert required(tmp_path) is False
    (tmp_path / "faultkit.toml").write_text("[validate]\nalert_raised = true\n")
    assert required(tmp_path) is True
    (tmp_path / "faultkit.toml").write_text("[validate]\nalert_raised = 'yes'\n")
    with pytest.raises(InputError, match="validate.alert_raised must be true or false"):
        required(tmp_path)
    with pytest.raises(UsageError, match="give --alerts URL"):
        ValidationParams(alert_raised=True).check()


def test_validate_refuses_in_one_line_when_the_catalog_asks_and_no_prometheus_is_given(cli, ws):
    (ws.root / "faultkit.toml").write_text("[validate]\nalert_raised = true\n")
    proc: subprocess.CompletedProcess[str] = cli("validate", "--fault", "t-any")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "Error: faultkit.toml asks alert-raised to decide admission")
