"""A campaign asks the platform, through `faultkit status --json`, whether an instance that is not up
left anything behind, instead of looking for the local platform's folder (issue 29): a process of a
supervisor that died is named, so the worker rebuilds (down, then up) rather than start beside it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psutil

from faultkit.campaigns.instances import AppInstance
from faultkit.platforms.local.processes import started_ticks
from faultkit.platforms.local.state import LocalState
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]


def test_an_instance_that_is_not_up_names_what_an_earlier_run_left_and_down_sweeps_it(tmp_path: Path) -> None:
    state_dir = tmp_path / "instances" / "0" / "state"
    inst = AppInstance(0, Workspace(root=REPO, state_dir=state_dir), state_dir, "minishop")
    assert inst.health().detail == "not up"  # a fresh folder: nothing to sweep, a plain up
    # a supervisor that died left one of its processes running, recorded as it records them
    pids = LocalState(state_dir).pids
    pids.parent.mkdir(parents=True)
    # not this test's child (a dead supervisor's process is nobody's): reparented, so its kill is seen
    pid = int(subprocess.run(["sh", "-c", "setsid sleep 120 >/dev/null 2>&1 & echo $!"], capture_output=True,
                             text=True, check=True).stdout)
    stray = psutil.Process(pid)
    pids.write_text(json.dumps({"pid": pid, "started": started_ticks(pid)}) + "\n")
    try:
        health = inst.health()
        assert not health.ok and health.detail == f"not up; left behind: process {pid} of an earlier run"
        inst.down()
        assert not stray.is_running() or stray.status() == psutil.STATUS_ZOMBIE
        assert inst.health().detail == "not up"
    finally:
        if stray.is_running():
            stray.kill()
