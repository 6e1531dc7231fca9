"""`faultkit up / status / down` through the real command group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faultkit.cli import main
from faultkit.platforms.local import LocalPlatform
from faultkit.platforms.local.status import ReplicaRecord, ServiceStatus, SupervisorStatus
from faultkit.workspace import Workspace


def test_up_status_down(workspace: Workspace, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # noqa: ANN001
    monkeypatch.setenv("FAULTKIT_ROOT", str(workspace.root))
    monkeypatch.setenv("FAULTKIT_STATE_DIR", str(workspace.state_dir))
    try:
        assert main(["up", "--app", "fix", "--timeout", "30"]) == 0
        assert "fix is up: 2 services ready" in capsys.readouterr().out
        assert main(["up", "--app", "fix"]) == 1
        assert "Error: fix is already up on the local platform" in capsys.readouterr().err
        assert main(["status", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["up"] and sorted(data["services"]) == ["back", "front"]
        assert all(i["ready"] for s in data["services"].values() for i in s["instances"])
        # the typed records are the wire format: every field, no other
        assert set(data) == {"up", *SupervisorStatus.__annotations__}
        assert all(set(s) == set(ServiceStatus.__annotations__) for s in data["services"].values())
        records = [i for s in data["services"].values() for i in s["instances"]]
        assert records and all(set(i) == set(ReplicaRecord.__annotations__) for i in records)
        assert main(["status"]) == 0
        out = capsys.readouterr().out
        assert "front" in out and "1/1" in out and "http://127.0.0.1:" in out
    finally:
        assert main(["down"]) == 0
    assert "fix is down" in capsys.readouterr().out
    assert main(["down"]) == 0
    assert "Nothing is up" in capsys.readouterr().out
    assert not LocalPlatform(workspace).is_up()


def test_up_of_an_unknown_app_is_one_line(workspace: Workspace, monkeypatch, capsys, tmp_path: Path) -> None:  # noqa: ANN001
    monkeypatch.setenv("FAULTKIT_ROOT", str(workspace.root))
    monkeypatch.setenv("FAULTKIT_STATE_DIR", str(workspace.state_dir))
    assert main(["up", "--app", "nope"]) == 1
    err = capsys.readouterr().err
    assert "Error: 'nope' is not an application of this catalog; known: fix\n" in err and "Traceback" not in err
