"""Shared fixtures: a throwaway catalog workspace made from the real minishop descriptor."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _private_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the repository's own .faultkit state or a running platform of the user's."""
    monkeypatch.setenv("FAULTKIT_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    monkeypatch.delenv("FAULTKIT_ROOT", raising=False)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """A catalog repository in tmp_path holding a copy of minishop and an empty catalog."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "apps" / "minishop", root / "apps" / "minishop",
                    ignore=shutil.ignore_patterns("__pycache__", ".ruff_cache", ".pytest_cache"))
    for folder in ("catalog/minishop", "patches/minishop", "schedules"):
        (root / folder).mkdir(parents=True)
    monkeypatch.setenv("FAULTKIT_ROOT", str(root))
    return Workspace.find(environ=os.environ)


def entry_data(**overrides: Any) -> dict[str, Any]:
    """A valid config entry for minishop; keyword arguments replace top-level fields."""
    data: dict[str, Any] = {
        "schema": "faultkit/v1",
        "id": "ms-cart-store-port",
        "app": "minishop",
        "title": "Cart store address port changed",
        "mechanism": "config",
        "category": "dependency",
        "level": "service",
        "target": {"service": "cart", "workload": "cart", "container": "cart"},
        "scope": ["cart", "checkout", "frontend"],
        "artifact": {"kind": "manifest-field", "ref": "Deployment/cart/cart/env.CARTSTORE_ADDR",
                     "aliases": ["CARTSTORE_ADDR", "cart"]},
        "probe": {"service": "frontend", "method": "GET", "path": "/cart?user=probe", "expect_status": 200},
        "artifact_check": {"kind": "setting", "workload": "cart", "container": "cart",
                           "field": "env.CARTSTORE_ADDR", "value": "cartstore:6379"},
        "config": {"workload": "cart", "container": "cart", "field": "env.CARTSTORE_ADDR",
                   "old": "cartstore:6379", "new": "cartstore:6380", "kind": "dependency-port"},
        "log": {"message": "cart store request failed", "service": "cart"},
        "effect": "errors",
        "evidence": {"metrics": ["http_requests_total{service=cart,status=500}"], "logs": ["cart store request failed"]},
        "recovery": "Restore CARTSTORE_ADDR of the cart deployment to cartstore:6379 and roll it out.",
    }
    data.update(overrides)
    return data


def write_entry(ws: Workspace, data: dict[str, Any], name: str | None = None) -> Path:
    path = ws.catalog_dir / data.get("app", "minishop") / (name or f"{data['id']}.yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def cli(ws: Workspace) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the real `faultkit` command in the workspace."""

    def run(*args: str, check: int | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "faultkit.cli", *args], cwd=ws.root,
                              capture_output=True, text=True, timeout=300)
        if check is not None:
            assert proc.returncode == check, proc.stdout + proc.stderr
        return proc

    return run
