"""The kubernetes platform's tests, on the real one-node cluster of tools/cluster (see its README).

No cluster answering fails the tests with the command to run (.ci/run starts the cluster): a
missing cluster must never pass as skipped tests. Every test works in namespaces named `fk-...`
that it creates, and deletes them at the end.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest
from kubernetes import client, config

from faultkit.platforms.kubernetes import KubernetesPlatform
from tests.platforms.kubernetes.k8s_support import CLUSTER, new_platform, ns_name


def _cluster(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLUSTER), *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def kubeconfig() -> str:
    deadline = time.monotonic() + 300  # the cluster may be restarting: give it a few minutes
    while True:
        status = _cluster("status")
        if status.returncode == 0:
            break
        if time.monotonic() > deadline:
            pytest.fail("no healthy cluster for tests/platforms/kubernetes: start it with `tools/cluster/cluster up` "
                        f"(.ci/run does); `cluster status` says: {status.stdout.strip()[-400:]}", pytrace=False)
        time.sleep(5)
    return _cluster("env").stdout.strip().removeprefix("export KUBECONFIG=")


@pytest.fixture(scope="session")
def core(kubeconfig: str) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))


@pytest.fixture(scope="session")
def apps_api(kubeconfig: str) -> client.AppsV1Api:
    return client.AppsV1Api(config.new_client_from_config(config_file=kubeconfig))


@pytest.fixture(scope="session")
def shop(tmp_path_factory: pytest.TempPathFactory, kubeconfig: str) -> Iterator[KubernetesPlatform]:
    """minishop up with its real images in a namespace of its own, for the whole session."""
    p = new_platform(tmp_path_factory.mktemp("k8s-shop"), kubeconfig, namespace=ns_name("shop"))
    p.up("minishop", timeout=240)
    yield p
    p.down()
