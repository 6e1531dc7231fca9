"""Stopping an action is proven, not assumed (issue 29): a stress process that outlives the stop
(one that left the helper's process group, as a re-spawned worker does) fails the stop, the
change's `undone` and `faultkit recover`, each naming the process; once it is gone all three pass."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from faultkit.errors import PlatformError
from faultkit.platforms.local import LocalPlatform
from faultkit.platforms.local.leftovers import ACTION_ENV, marked_pids
from faultkit.validators.app_changes import ActionChange
from faultkit.validators.journal import Journal, recover

pytestmark = pytest.mark.live


def test_a_stress_process_left_behind_fails_recovery(up: LocalPlatform, tmp_path: Path) -> None:
    change = ActionChange("cpu-stress", "back", {"workers": 1}).apply(up)
    assert change.handle is not None and len(marked_pids(change.handle)) == 1  # the helper carries the mark
    journal = Journal(tmp_path / "journal.json")
    journal.begin("run", "fault")
    journal.mark(journal.record(change), "applied", change)
    # the sabotage: a real busy loop with the action's mark in a session of its own, out of reach of
    # the helper's process-group kill, as a worker re-spawned by a stress tool would be
    stray = subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True,
                             env={**os.environ, ACTION_ENV: change.handle})
    try:
        with pytest.raises(PlatformError, match=f"process {stray.pid} of {change.handle} still runs"):
            up.stop_action(change.handle)
        assert up.action_leftovers(change.handle) == [f"process {stray.pid} of {change.handle} still runs"]
        check = change.undone(up)
        assert not check.ok and str(stray.pid) in check.detail
        with pytest.raises(PlatformError, match=f"process {stray.pid} of {change.handle} still runs"):
            recover(up, journal)
        assert journal.open_changes()  # still open: recovery did not pretend
    finally:
        stray.kill()
        stray.wait()
    assert up.action_leftovers(change.handle) == []
    assert change.undone(up).ok
    assert recover(up, journal) == ["stopped cpu-stress on back"]
    assert not journal.path.exists()


def test_a_clean_stop_leaves_nothing(up: LocalPlatform) -> None:
    handle = up.start_action("instance-failure", "back", {})
    up.stop_action(handle)
    assert up.action_leftovers(handle) == []
    handle = up.start_action("network-delay", "back", {"ms": 100})
    up.stop_action(handle)
    assert up.action_leftovers(handle) == []
