"""The journal names the target its changes were made on; recover refuses any other target."""

from __future__ import annotations

import json

import pytest

from faultkit.errors import PlatformError
from faultkit.validators.app_changes import SettingChange
from faultkit.validators.journal import Journal, recover


class Elsewhere:
    """A platform answering for another namespace: recover must stop before asking it anything else."""

    name = "kubernetes"

    def target(self) -> dict[str, str]:
        return {"platform": "kubernetes", "server": "https://10.0.0.1:6443", "context": "prod", "namespace": "shop"}

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"recover called {name} on the wrong target")


def test_the_journal_records_the_target_and_recover_refuses_another(tmp_path):
    journal = Journal(tmp_path / "journal.json")
    recorded = {"platform": "kubernetes", "server": "https://10.0.0.1:6443", "context": "ci", "namespace": "fk-1"}
    journal.begin("run", "fault", recorded)
    journal.record(SettingChange("cart", "cart", "env.X", "1", None, "cart", 30.0))
    assert json.loads(journal.path.read_text())["target"] == recorded
    assert journal.target() == recorded
    with pytest.raises(PlatformError, match="context=ci.*not on.*context=prod.*--platform kubernetes"):
        recover(Elsewhere(), journal)
    assert journal.open_changes(), "a refused recover must leave the journal as it was"
