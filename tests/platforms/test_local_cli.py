"""`faultkit up / status / down` through the real command group."""

from __future__ import annotations

import json
import subprocess

import pytest

from faultkit.platforms.local import LocalPlatform
from faultkit.platforms.local.status import ReplicaRecord, ServiceStatus, SupervisorStatus
from faultkit.workspace import Workspace
from tests.helpers.cli import cli_env, run_cli

pytestmark = pytest.mark.live


def test_up_status_down(workspace: Workspace) -> None:
    env = cli_env(FAULTKIT_ROOT=str(workspace.root), FAULTKIT_STATE_DIR=str(workspace.state_dir))

    def fk(*args: str, check: int) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=workspace.root, env=env, check=check)

    try:
        assert "fix is up: 2 services ready" in fk("up", "--app", "fix", "--timeout", "30", check=0).stdout
        assert "Error: fix is already up on the local platform" in fk("up", "--app", "fix", check=1).stderr
        data = json.loads(fk("status", "--json", check=0).stdout)
        assert data["up"] and sorted(data["services"]) == ["back", "front"]
        assert all(i["ready"] for s in data["services"].values() for i in s["instances"])
        # the typed records are the wire format: every field, no other
        assert set(data) == {"up", *SupervisorStatus.__annotations__}
        assert all(set(s) == set(ServiceStatus.__annotations__) for s in data["services"].values())
        records = [i for s in data["services"].values() for i in s["instances"]]
        assert records and all(set(i) == set(ReplicaRecord.__annotations__) for i in records)
        out = fk("status", check=0).stdout
        assert "front" in out and "1/1" in out and "http://127.0.0.1:" in out
    finally:
        down = fk("down", check=0)
    assert "fix is down" in down.stdout
    assert "Nothing is up" in fk("down", check=0).stdout
    assert not LocalPlatform(workspace).is_up()


def test_up_of_an_unknown_app_is_one_line(workspace: Workspace) -> None:
    env = cli_env(FAULTKIT_ROOT=str(workspace.root), FAULTKIT_STATE_DIR=str(workspace.state_dir))
    err = run_cli("up", "--app", "nope", cwd=workspace.root, env=env, check=1).stderr
    assert "Error: 'nope' is not an application of this catalog; known: fix\n" in err and "Traceback" not in err
