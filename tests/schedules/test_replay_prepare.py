"""`schedule run` prepares the platform as validate does: once, before anything is built or changed,
when the schedule holds a direct fault. On the fake platform, whose prepare here cannot start its
agent: the replay stops with that reason and has changed nothing (issue 29)."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultkit.errors import PlatformError
from faultkit.replay.plan import SchedulePlan
from faultkit.replay.runner import RunOptions, run_schedule
from faultkit.validators.faults import load_fault
from faultkit.workspace import Workspace
from tests.fakes.platform import FakePlatform

REPO = Path(__file__).resolve().parents[2]
DIRECT = "minishop-cart-cpu-stress"


class NoAgent(FakePlatform):
    def prepare(self) -> None:
        raise PlatformError("the node agent cannot run: its image is not on the node")


def test_a_platform_that_cannot_prepare_stops_the_replay_before_any_change(tmp_path: Path) -> None:
    ws = Workspace(root=REPO, state_dir=tmp_path / "state")
    platform = NoAgent(ws)
    platform.up("minishop")
    entry, _ = load_fault(ws, DIRECT)
    assert entry.direct is not None
    plan = SchedulePlan(name="s", file_digest="sha256:0", text="{}", doc={"app": "minishop", "events": []},
                        entries={DIRECT: entry}, invocations=1, interval_s=1.0)
    with pytest.raises(PlatformError, match="node agent cannot run"):
        run_schedule(ws, platform, plan, RunOptions(interval_s=1.0, runs_dir=tmp_path / "runs"),
                     show=lambda _: None, progress=lambda _: None)
    assert platform.active_actions() == []
    assert not (ws.state_dir / "journal.json").exists() and not (tmp_path / "runs").exists()
    platform.down()
