"""The platform contract: minishop up on every platform, one at a time, for the same assertions.

kubernetes runs on the one-node cluster of tools/cluster (no cluster answering fails, with the
command to start it); local runs minishop as processes. Each gets a state folder of its own.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from faultkit.platforms.base import Platform
from faultkit.platforms.kubernetes import KubernetesPlatform
from faultkit.platforms.local import LocalPlatform
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[3]
CLUSTER = REPO / "tools" / "cluster" / "cluster"


def _kubeconfig() -> str:
    deadline = time.monotonic() + 300
    while subprocess.run([str(CLUSTER), "status"], capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            pytest.fail("no healthy cluster for the kubernetes contract: start it with `tools/cluster/cluster up` "
                        "(.ci/run does)", pytrace=False)
        time.sleep(5)
    env = subprocess.run([str(CLUSTER), "env"], capture_output=True, text=True).stdout.strip()
    return env.removeprefix("export KUBECONFIG=")


@pytest.fixture(scope="module", params=["local", "kubernetes"])
def platform(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    ws = Workspace(root=REPO, state_dir=tmp_path_factory.mktemp(f"contract-{request.param}"))
    p: Platform
    if request.param == "local":
        p = LocalPlatform(ws, app="minishop")
    else:
        p = KubernetesPlatform(ws, kubeconfig=_kubeconfig(), namespace=f"fk-contract-{uuid.uuid4().hex[:6]}",
                               loader=f"{CLUSTER} load")
    p.up("minishop", timeout=240)
    yield p
    p.down()
