"""The real one-node cluster of tools/cluster, as .ci/run (or a developer) started it.

The tests do not start the cluster themselves: starting it takes a build (tens of minutes cold)
and root. With no healthy cluster they FAIL with the command to run, so a missing cluster never
passes as skipped tests.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from kubernetes import client, config

from tests.helpers.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
CLUSTER = REPO / "tools" / "cluster" / "cluster"


def cluster(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLUSTER), *args], capture_output=True, text=True, timeout=timeout)


def kubeconfig_path() -> str:
    status = cluster("status", timeout=60)
    if status.returncode != 0:
        pytest.fail("no healthy cluster for tests/cluster: start it with `tools/cluster/cluster up` "
                    f"(.ci/run does); `cluster status` says: {status.stdout.strip()} {status.stderr.strip()}",
                    pytrace=False)
    env = cluster("env", timeout=60).stdout.strip()
    return env.removeprefix("export KUBECONFIG=")


@pytest.fixture(scope="session")
def api() -> client.ApiClient:
    return config.new_client_from_config(config_file=kubeconfig_path())


@pytest.fixture(scope="session")
def core(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)




@pytest.fixture(scope="module")
def namespace(core: client.CoreV1Api) -> Iterator[str]:
    """A namespace of its own per test module, deleted afterwards."""
    name = f"fk-test-{uuid.uuid4().hex[:8]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))

    def default_account() -> bool:
        return any(sa.metadata.name == "default" for sa in core.list_namespaced_service_account(name).items)
    wait_until(default_account, 60, f"the default ServiceAccount of {name}")
    yield name
    core.delete_namespace(name)


@pytest.fixture(scope="session")
def testapp_image(api: client.ApiClient) -> str:
    """tools/cluster's testapp binary in a FROM-scratch image built by the local Docker engine, then
    loaded into the cluster's containerd with `cluster load`."""
    built = cluster("build")
    assert built.returncode == 0, built.stderr
    binary = Path(built.stdout.strip().rsplit("-> ", 1)[1]) / "testapp"
    try:
        engine = docker.from_env()
        engine.ping()
    except docker.errors.DockerException as err:
        pytest.fail(f"the Docker engine is needed to build the test image: {err}; "
                    "start one with scripts/ci/dockerd.sh start", pytrace=False)
    tag = f"faultkit-cluster-testapp:{binary.stat().st_mtime_ns}"
    context = Path(binary.parent.parent / "image-context")
    context.mkdir(exist_ok=True)
    (context / "testapp").write_bytes(binary.read_bytes())
    (context / "testapp").chmod(0o755)
    (context / "Dockerfile").write_text('FROM scratch\nCOPY testapp /testapp\nENTRYPOINT ["/testapp"]\n')
    engine.images.build(path=str(context), tag=tag, rm=True)
    loaded = cluster("load", tag, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    return tag
