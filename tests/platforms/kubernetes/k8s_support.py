"""Helpers of the kubernetes platform's tests (beside conftest.py; this folder is not a package, since
its name would shadow the `kubernetes` client library)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from faultkit.platforms.kubernetes import KubernetesPlatform
from faultkit.workspace import Workspace
from tests.helpers import waiting

REPO = Path(__file__).resolve().parents[3]
CLUSTER = REPO / "tools" / "cluster" / "cluster"
LOADER = f"{CLUSTER} load"




def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """The shared poll, at the half-second pace the platform tests were written for."""
    return waiting.wait_until(check, timeout, what, interval)


def new_platform(tmp: Path, kubeconfig: str, **kw: Any) -> KubernetesPlatform:
    ws = Workspace(root=REPO, state_dir=tmp)
    return KubernetesPlatform(ws, kubeconfig=kubeconfig, loader=LOADER, **kw)


def ns_name(what: str) -> str:
    return f"fk-{what}-{uuid.uuid4().hex[:6]}"
