"""Helpers of the kubernetes platform's tests (beside conftest.py; this folder is not a package, since
its name would shadow the `kubernetes` client library)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from faultkit.platforms.kubernetes import KubernetesPlatform
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[3]
CLUSTER = REPO / "tools" / "cluster" / "cluster"
LOADER = f"{CLUSTER} load"


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}", pytrace=False)
        time.sleep(interval)


def new_platform(tmp: Path, kubeconfig: str, **kw: Any) -> KubernetesPlatform:
    ws = Workspace(root=REPO, state_dir=tmp)
    return KubernetesPlatform(ws, kubeconfig=kubeconfig, loader=LOADER, **kw)


def ns_name(what: str) -> str:
    return f"fk-{what}-{uuid.uuid4().hex[:6]}"
