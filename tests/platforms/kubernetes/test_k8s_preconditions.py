"""`up` checks the cluster before it builds anything (issue 29): into a namespace that exists it is
refused in seconds (it built and loaded every image first and refused after 83 s), and --adopt of a
namespace holding none of the app's workloads is refused naming them (it said "11 services ready")."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from faultkit.apps.descriptor import load_app
from faultkit.errors import PlatformError
from tests.platforms.kubernetes.k8s_support import new_platform, ns_name

pytestmark = [pytest.mark.live, pytest.mark.exclusive]


@pytest.fixture
def empty_ns(core: client.CoreV1Api) -> Iterator[str]:
    name = ns_name("empty")
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    core.delete_namespace(name)


def test_up_into_an_existing_namespace_is_refused_before_any_build(tmp_path: Path, kubeconfig: str,
                                                                   empty_ns: str) -> None:
    p = new_platform(tmp_path, kubeconfig, namespace=empty_ns)
    started = time.monotonic()
    with pytest.raises(PlatformError, match=f"namespace '{empty_ns}' already exists.*--adopt {empty_ns}"):
        p.up("minishop", timeout=60)
    assert time.monotonic() - started < 10  # no image was built or loaded
    assert not p.is_up()


def test_adopting_a_namespace_without_the_apps_workloads_is_refused(tmp_path: Path, kubeconfig: str,
                                                                    empty_ns: str) -> None:
    p = new_platform(tmp_path, kubeconfig, adopt=empty_ns)
    with pytest.raises(PlatformError) as refused:
        p.up("minishop")
    message = str(refused.value)
    assert "\n" not in message and f"namespace '{empty_ns}' holds none of minishop's workloads" in message
    assert all(f"Deployment/{s.workload}" in message for s in load_app(p.workspace, "minishop").services)
    assert not p.is_up()
