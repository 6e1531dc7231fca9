"""Helpers of the kubernetes platform's tests (beside conftest.py). The folder is the package
tests.platforms.kubernetes: its name cannot shadow the `kubernetes` client library, because the
repository root, not this folder, is what pytest puts on sys.path."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from faultkit.platforms.kubernetes import KubernetesPlatform
from faultkit.workspace import Workspace
from tests.helpers import waiting

REPO = Path(__file__).resolve().parents[3]
CLUSTER = REPO / "tools" / "cluster" / "cluster"
LOADER = f"{CLUSTER} load"

# Known and open (issue 15): the six-fault sample has not yet been seen giving the recorded
# verdicts on the cluster; every run so far ended overloaded (load 35 to 54 per core) or, under
# rules v3, with stateful probe attempts racing each other. It takes about 12 minutes of the CI's
# 90, and an unproven result is not worth them: `long` (run it with `pytest -m long`), and not
# strict when run.
SAMPLE_UNPROVEN = [
    pytest.mark.long,
    pytest.mark.xfail(reason="the six-fault sample has not yet been seen giving the recorded verdicts on the "
                             "cluster (issue 15)", strict=False),
]


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """The shared poll, at the half-second pace the platform tests were written for."""
    return waiting.wait_until(check, timeout, what, interval)


def new_platform(tmp: Path, kubeconfig: str, **kw: Any) -> KubernetesPlatform:
    ws = Workspace(root=REPO, state_dir=tmp)
    return KubernetesPlatform(ws, kubeconfig=kubeconfig, loader=LOADER, **kw)


def ns_name(what: str) -> str:
    return f"fk-{what}-{uuid.uuid4().hex[:6]}"
