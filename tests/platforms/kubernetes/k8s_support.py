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

# Known and open (issue 15): run on a quiet machine under rules v2, three of the six faults get
# their recorded verdict on the cluster and `judge` agrees (the two config faults and the ACL code
# fault). Three do not, for reasons in the app and the platform, not in the test:
# - both instance failures (checkout, cartstore) are rejected with 0 5xx a minute: the instance
#   stops answering, the caller's 5xx is written after the load generator hung up, and minishop's
#   counter counts only after writing (the counter fix of issue 21, which changes every service's build);
# - minishop-code-checkout-shipping-quote is flaky: one probe 4 s into a recovery window got a 500
#   after 2.1 s, with the rollback complete and the old pods gone (kube-proxy still programming?).
# It takes about 12 minutes of the CI's 90: `long` (run it with `pytest -m long`), not strict.
SAMPLE_UNPROVEN = [
    pytest.mark.long,
    pytest.mark.xfail(reason="three of the six faults do not yet get their recorded verdicts on the cluster "
                             "(issue 15; see k8s_support.py)", strict=False),
]


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """The shared poll, at the half-second pace the platform tests were written for."""
    return waiting.wait_until(check, timeout, what, interval)


def new_platform(tmp: Path, kubeconfig: str, **kw: Any) -> KubernetesPlatform:
    ws = Workspace(root=REPO, state_dir=tmp)
    return KubernetesPlatform(ws, kubeconfig=kubeconfig, loader=LOADER, **kw)


def ns_name(what: str) -> str:
    return f"fk-{what}-{uuid.uuid4().hex[:6]}"
