"""The campaign tests that run on the one-node cluster of tools/cluster: a missing cluster fails them
with the command to run, never passes as skipped."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

CLUSTER = Path(__file__).resolve().parents[2] / "tools" / "cluster" / "cluster"

@pytest.fixture(scope="module")
def kubeconfig() -> str:
    deadline = time.monotonic() + 300
    while subprocess.run([str(CLUSTER), "status"], capture_output=True, text=True).returncode != 0:
        if time.monotonic() > deadline:
            pytest.fail("no healthy cluster: start it with `tools/cluster/cluster up` (.ci/run does)", pytrace=False)
        time.sleep(5)
    out = subprocess.run([str(CLUSTER), "env"], capture_output=True, text=True, check=True).stdout
    return out.strip().removeprefix("export KUBECONFIG=")
