"""A small catalog repository in tmp_path with one release, for the schedule tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faultkit.schedules import synthetic
from tests.schedules.entries import shop_entries


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "dist").mkdir()
    release = synthetic.release("1.0.0", shop_entries())
    (tmp_path / "dist" / "catalog-1.0.0.json").write_text(json.dumps(release), "utf-8")
    monkeypatch.setenv("FAULTKIT_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path
