"""The alert modality of labels (issue 31): the pack's alerts a fault raised in its counted cycles,
lint's finding when it raised none or the declared evidence names none of them, and the release's
record of them and of the pack's digest."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from jsonschema import Draft202012Validator

from faultkit.bundles import LABELS
from faultkit.catalog.release import build_release
from faultkit.labels.declared import check_declared
from faultkit.labels.key_evidence import Cycle, alert_evidence, key_evidence
from faultkit.observe.window import Window
from faultkit.schema import schema_text
from tests.factories import port_entry
from tests.release.admit import admit, custody
from tests.validators import windows as w

ERRORS = {"alert": "ServiceErrorRatioHigh", "labels": {"service_name": "frontend"}}
DOWN = {"alert": "ServiceDown", "labels": {}}


def with_alerts(name: str, *firing: dict[str, Any], pending: tuple[dict[str, Any], ...] = ()) -> Window:
    rows = [{**a, "state": "firing", "active_at": 1.0, "first_seen": 2.0, "last_seen": 3.0, "firing_seen": 2.0}
            for a in firing]
    rows += [{**a, "state": "pending", "active_at": 1.0, "first_seen": 2.0, "last_seen": 3.0} for a in pending]
    window = w.window(name, w.HEALTHY)
    return {**window, "alerts": {"source": "http://127.0.0.1:9090", "polls": 3, "failed_polls": 0, "alerts": rows}}


def cycle(index: int, before: tuple[dict[str, Any], ...], after: tuple[dict[str, Any], ...],
          pending: tuple[dict[str, Any], ...] = ()) -> Cycle:
    return Cycle(index, with_alerts(f"before-{index}", *before), with_alerts(f"after-{index}", *after, pending=pending))


def test_windows_without_alerts_give_labels_without_the_modality():
    plain = [Cycle(1, w.window("before-1", w.HEALTHY), w.window("after-1", w.FAILING))]
    assert alert_evidence(plain) is None
    assert "alerts" not in key_evidence(plain, "/", "frontend")  # labels of older bundles keep their bytes


def test_an_alert_raised_is_listed_with_its_cycles_and_one_already_firing_or_pending_is_not():
    cycles = [cycle(1, (DOWN,), (DOWN, ERRORS)), cycle(2, (), (ERRORS,), pending=(DOWN,))]
    assert alert_evidence(cycles) == [{"alert": "ServiceErrorRatioHigh{service_name=frontend}", "cycles": [1, 2]}]
    assert alert_evidence([cycle(1, (DOWN,), (DOWN,))]) == []


def labels(alerts: list[dict[str, Any]] | None) -> dict[str, Any]:
    evidence: dict[str, Any] = {"metrics": [], "logs": [], "events": []}
    if alerts is not None:
        evidence["alerts"] = alerts
    return {"evidence": evidence, "chain": []}


def test_lint_finds_a_fault_that_raised_no_alert_or_whose_evidence_names_none_of_those_it_raised():
    raised = [{"alert": "ServiceErrorRatioHigh{service_name=frontend}", "cycles": [1, 2]}]
    assert check_declared({"evidence": {"metrics": []}}, labels(None)) == []
    silent = check_declared({"evidence": {"metrics": []}}, labels([]))
    assert [f.path for f in silent] == ["evidence"] and "the agent would see no alert" in silent[0].message
    unnamed = check_declared({"evidence": {"metrics": []}}, labels(raised))
    assert [f.path for f in unnamed] == ["evidence"]
    assert "names no alert that fired" in unnamed[0].message and "ServiceErrorRatioHigh{" in unnamed[0].message
    named = {"evidence": {"metrics": ["ServiceErrorRatioHigh for frontend"]}}
    assert check_declared(named, labels(raised)) == []


def test_the_release_records_the_alert_pack_digest_and_the_alerts_each_fault_raised(ws):
    data = admit(ws, port_entry(1))
    pack = ws.apps_dir / "minishop" / "alerts.yaml"
    pack.write_text("groups: []\n")
    release = build_release(ws, custody(), "1")
    assert release["apps"]["minishop"]["alert_pack"] == "sha256:" + hashlib.sha256(b"groups: []\n").hexdigest()
    assert "alerts" not in release  # no fault was labelled with the pack
    # labels beside the admitting verdict that recorded the pack give the fault's raised alerts
    stored = {"schema": "faultkit/labels/v1", "fault": data["id"], "bundle": data["validation"]["bundle_digest"],
              "evidence": labels([{"alert": "ServiceDown", "cycles": [1]}])["evidence"], "chain": []}
    (ws.root / data["validation"]["bundle"] / LABELS).write_text(json.dumps(stored))
    release = build_release(ws, custody(), "1")
    assert release["alerts"] == {data["id"]: ["ServiceDown"]}
    Draft202012Validator(json.loads(schema_text("release"))).validate(release)
    pack.unlink()
    assert "alert_pack" not in build_release(ws, custody(), "1")["apps"]["minishop"]
