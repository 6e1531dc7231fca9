"""A small catalog repository in tmp_path with one release, for the schedule tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faultkit.schedules import synthetic

SIX = ("code-bug", "dependency", "infrastructure", "deployment", "configuration-bug",
       "database-network")


def shop_entries() -> list[dict]:
    """Two apps: shop (11 services, no authentication faults) and rail (all seven categories)."""
    return synthetic.entries("shop", 11, 80, SIX) + synthetic.entries("rail", 41, 80)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "dist").mkdir()
    release = synthetic.release("1.0.0", shop_entries())
    (tmp_path / "dist" / "catalog-1.0.0.json").write_text(json.dumps(release), "utf-8")
    monkeypatch.setenv("FAULTKIT_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path
