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

# Known and open (issues 15 and 21): at a test's short windows the rules-v3 probe starts an attempt
# every 0.2-0.3 s, while an attempt through the port-forward takes 200-370 ms here, so attempts
# overlap; a stateful probe's overlapping attempts (cart setup and checkout for the one probe user)
# then race each other into 400s with the app at rest, and probe-healthy-before or
# recovery-probe-healthy can fail (seen: 2/36 and 4/21 failed). A verdict asserted on the cluster
# at such windows is therefore expected to fail sometimes, not always: not strict.
PROBE_OVERLAP = pytest.mark.xfail(
    reason="rules-v3 probe attempts overlap the port-forward's round trip at short windows and a stateful "
           "probe's overlapping attempts race into 400s at rest (open: issues 15 and 21)",
    strict=False,
)


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """The shared poll, at the half-second pace the platform tests were written for."""
    return waiting.wait_until(check, timeout, what, interval)


def new_platform(tmp: Path, kubeconfig: str, **kw: Any) -> KubernetesPlatform:
    ws = Workspace(root=REPO, state_dir=tmp)
    return KubernetesPlatform(ws, kubeconfig=kubeconfig, loader=LOADER, **kw)


def ns_name(what: str) -> str:
    return f"fk-{what}-{uuid.uuid4().hex[:6]}"
