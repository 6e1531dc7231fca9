"""The change values: what each shipped entry changes, their journal JSON (including journals
written before the change objects), and the journal's states. The undo itself runs on a real
platform in test_recover.py and test_validate.py."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from faultkit.catalog.model import entry_from_data
from faultkit.errors import PlatformError
from faultkit.validators.app_changes import (
    ActionChange,
    Check,
    RolloutChange,
    SettingChange,
    change_for,
    from_json,
)
from faultkit.validators.journal import Journal

REPO = Path(__file__).resolve().parents[2]
ENTRIES = {p.stem: entry_from_data(yaml.safe_load(p.read_text())) for p in (REPO / "catalog").glob("*/*.yaml")}


def shipped(mechanism: str):
    return next(e for e in ENTRIES.values() if e.mechanism == mechanism)


def test_a_code_fault_is_a_rollout_undone_to_the_baseline_build():
    entry = shipped("code")
    change = change_for(entry, build="sha256:new", undo_build="sha256:old", timeout_s=30)
    assert change == RolloutChange(entry.target.service, "sha256:new", "sha256:old", 30)
    assert change.describe() == f"rolled {entry.target.service} back to sha256:old"
    with pytest.raises(PlatformError, match="needs its new build"):
        change_for(entry)


def test_a_config_fault_is_a_setting_undone_to_the_old_value():
    entry = shipped("config")
    c = entry.config
    change = change_for(entry, timeout_s=30)
    assert change == SettingChange(c.workload, c.container, c.field, c.new, c.old, entry.target.service, 30)
    assert change.describe() == f"restored {c.workload}/{c.container} {c.field} to {c.old!r}"


@pytest.mark.parametrize(("level", "mode"), [("pod", "one"), ("service", "all")])
def test_a_direct_fault_is_an_action_on_one_replica_or_all(level, mode):
    entry = replace(shipped("direct"), level=level)  # the shipped direct faults are all pod level
    change = change_for(entry)
    assert isinstance(change, ActionChange) and change.handle is None
    assert change.mode == mode and "mode" not in change.params and change.action == entry.direct.action
    assert change.describe() == f"stopped {entry.direct.action} on {entry.target.service}"


@pytest.mark.parametrize("fault", sorted(ENTRIES))
def test_every_shipped_change_round_trips_through_json(fault):
    change = change_for(ENTRIES[fault], build="sha256:new", undo_build="sha256:old")
    text = json.dumps(change.to_json(), sort_keys=True)
    assert from_json(json.loads(text)) == change


# Journal entries as the validator wrote them before change objects existed: recover reads them.
OLD_JOURNAL = {
    "run": "20261130T000000000Z", "fault": "x", "pid": 1, "started": 1.0,
    "changes": [
        {"kind": "rollout", "service": "checkout", "build": "sha256:b", "undo_build": "sha256:a", "timeout": 30,
         "state": "undone", "at": 1.0},
        {"kind": "patch", "workload": "cart", "container": "cart", "field": "env.CARTSTORE_ADDR",
         "value": "cartstore:6380", "undo_value": "cartstore:6379", "timeout": 30, "state": "applied", "at": 2.0},
        {"kind": "action", "action": "instance-failure", "service": "cartstore", "params": {"mode": "all"},
         "handle": "instance-failure-3", "state": "applied", "at": 3.0},
        {"kind": "action", "action": "cpu-stress", "service": "cart", "params": {"mode": "all"},
         "state": "pending", "at": 4.0},
    ],
}


def test_a_journal_written_before_change_objects_still_reads(tmp_path):
    path = tmp_path / "journal.json"
    path.write_text(json.dumps(OLD_JOURNAL))
    open_changes = Journal(path).open_changes()
    assert [j.index for j in open_changes] == [1, 2, 3]
    assert open_changes[0].change == SettingChange("cart", "cart", "env.CARTSTORE_ADDR", "cartstore:6380",
                                                   "cartstore:6379", "cart", 30.0)
    # the mode, kept in params by earlier journals, is read into its own field
    assert open_changes[1].change == ActionChange("instance-failure", "cartstore", {}, "instance-failure-3", "all")
    assert open_changes[2].change.handle is None  # killed before the handle was recorded: undo stops all


def test_journal_records_before_and_marks_after(tmp_path):
    journal = Journal(tmp_path / "journal.json")
    journal.begin("run", "fault")
    change = ActionChange("cpu-stress", "cart", {}, mode="all")
    index = journal.record(change)
    assert json.loads(journal.path.read_text())["changes"][index]["state"] == "pending"
    journal.mark(index, "applied", ActionChange("cpu-stress", "cart", {}, "cpu-stress-1", "all"))
    [item] = journal.open_changes()
    assert item.state == "applied" and item.change.handle == "cpu-stress-1"
    with pytest.raises(Exception, match="run `faultkit recover` first"):
        journal.begin("run2", "fault")
    journal.mark(index, "undone")
    journal.finish()
    assert not journal.path.exists()


def test_an_unknown_change_kind_is_a_clear_error():
    with pytest.raises(PlatformError, match="unknown change kind 'reboot'"):
        from_json({"kind": "reboot"})


def test_a_check_records_the_build_only_for_rollouts():
    assert Check(True, "sha256:new", "sha256:new", "every replica runs the expected build", "sha256:new").record() == {
        "ok": True, "measured": "sha256:new", "threshold": "sha256:new",
        "detail": "every replica runs the expected build", "build": "sha256:new"}
    assert "build" not in Check(False, None, "x", "deployed value read back; cart ready: True").record()
