"""The platform contract: minishop up on every platform, one at a time, for the same assertions.

kubernetes runs on the one-node cluster of tools/cluster (no cluster answering fails, with the
command to start it); local runs minishop as processes; fake (tests/fakes) holds minishop's
manifests and builds in memory and needs neither (run it alone with `-k fake`). Each gets a state
folder of its own.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from faultkit.platforms.base import Platform
from faultkit.workspace import Workspace
from tests.fakes.platform import FakePlatform

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


def _open(name: str, ws: Workspace) -> Platform:
    """The platform under test; the live ones are imported only when asked for."""
    if name == "fake":
        return FakePlatform(ws)
    if name == "local":
        from faultkit.platforms.local import LocalPlatform

        return LocalPlatform(ws, app="minishop")
    from faultkit.platforms.kubernetes import KubernetesPlatform

    return KubernetesPlatform(ws, kubeconfig=_kubeconfig(), namespace=f"fk-contract-{uuid.uuid4().hex[:6]}",
                              loader=f"{CLUSTER} load")


# local and kubernetes start real apps (the live tier; kubernetes on the machine's one cluster, so
# exclusive); the fake is in the fast tier
@pytest.fixture(scope="module", params=[pytest.param("local", marks=pytest.mark.live),
                                        pytest.param("kubernetes", marks=[pytest.mark.live, pytest.mark.exclusive]),
                                        "fake"])
def platform(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    ws = Workspace(root=REPO, state_dir=tmp_path_factory.mktemp(f"contract-{request.param}"))
    p = _open(request.param, ws)
    p.up("minishop", timeout=240)
    yield p
    p.down()
