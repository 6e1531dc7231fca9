"""`faultkit schedule run --platform kubernetes` (issue 29): the shipped release's light-5 schedule
replays on the one-node cluster with 5 s invocations, every fault is injected and reverted in the
schedule's order, nothing is left in force on the application, and `schedule judge` recomputes the
sealed record's figures alike.

It runs on the session's minishop (conftest.py `shop`) and writes its schedule and record into the
test's temporary folder, not the repository.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from faultkit.platforms.kubernetes import KubernetesPlatform
from tests.helpers.cli import cli_env, run_cli
from tests.platforms.kubernetes.k8s_support import REPO

pytestmark = [pytest.mark.live, pytest.mark.exclusive]


def faultkit(shop: KubernetesPlatform, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(FAULTKIT_ROOT=str(REPO), FAULTKIT_STATE_DIR=str(shop.workspace.state_dir))
    return run_cli(*args, cwd=REPO, env=env, timeout=900)


def _state(shop: KubernetesPlatform) -> dict[str, Any]:
    return {"builds": sorted((i.service, i.build) for i in shop.instances()), "actions": sorted(shop.active_actions())}


def test_light_5_replays_on_the_cluster_leaves_nothing_and_judges_clean(shop: KubernetesPlatform,
                                                                         tmp_path: Path) -> None:
    schedule = tmp_path / "light-5.json"
    out = faultkit(shop, "schedule", "export", "--app", "minishop", "--seed", "1", "--preset", "light-5",
                   "--out", str(schedule))
    assert out.returncode == 0, out.stderr
    doc = json.loads(schedule.read_text())
    before = _state(shop)

    run = faultkit(shop, "schedule", "run", str(schedule), "--platform", "kubernetes", "--interval", "5s",
                   "--runs", str(tmp_path / "runs"), "--json")
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["aborted"] is None and result["left_active"] == []
    record = Path(result["record"])
    changes = json.loads((record / "changes.json").read_text())
    expected = sorted(((e["invocation"], e["op"], e["fault"]) for e in doc["events"]),
                      key=lambda x: (x[0], x[1] == "inject"))  # reverts before injections at a boundary
    assert [(c["invocation"], c["op"], c["fault"]) for c in changes] == expected
    assert all(c["ok"] for c in changes)
    assert len(result["injections"]) == len({e["fault"] for e in doc["events"]}) == 5
    assert _state(shop) == before  # every build rolled back, no action in force

    judged = faultkit(shop, "schedule", "judge", str(record), "--json")
    assert judged.returncode == 0, judged.stdout[-2000:] + judged.stderr[-2000:]
