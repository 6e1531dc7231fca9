"""The Chaos Mesh export is accepted by a real API server once CRDs of the same group, version and
kind are installed: minimal CRDs written here (not the upstream files), with a structural schema
that requires what every exported object carries (selector, mode; action where the kind has one).

Runs on the one-node cluster of tools/cluster/ through tests/cluster/conftest.py's `api` client,
which fails with the command to run when no cluster is up.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from faultkit.catalog.chaos_mesh import API_VERSION, chaos_mesh
from faultkit.commands.release_cmds import custody
from faultkit.workspace import Workspace

pytestmark = [pytest.mark.live, pytest.mark.exclusive]

REPO = Path(__file__).resolve().parents[2]
SHIPPED = Workspace(root=REPO, state_dir=REPO / ".faultkit")
GROUP, VERSION = API_VERSION.split("/")
KINDS = {"PodChaos": "podchaos", "NetworkChaos": "networkchaos", "StressChaos": "stresschaos"}
REQUIRED = {"PodChaos": ["selector", "mode", "action"], "NetworkChaos": ["selector", "mode", "action"],
            "StressChaos": ["selector", "mode", "stressors"]}


def crd(kind: str) -> dict[str, Any]:
    plural = KINDS[kind]
    spec_schema = {
        "type": "object",
        "required": REQUIRED[kind],
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {
            "mode": {"type": "string", "enum": ["one", "all", "fixed", "fixed-percent", "random-max-percent"]},
            "duration": {"type": "string"},
            "selector": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": plural, "listKind": f"{kind}List"},
            "versions": [{"name": VERSION, "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}}}],
        },
    }


@pytest.fixture(scope="module")
def api(api: client.ApiClient) -> Iterator[tuple[client.CustomObjectsApi, str]]:
    """Overrides conftest's `api` (the cluster's client) with the CRDs installed and a namespace."""
    ext, core = client.ApiextensionsV1Api(api), client.CoreV1Api(api)
    made = []
    for kind in KINDS:
        name = f"{KINDS[kind]}.{GROUP}"
        found = _crd(ext, name)
        if found is not None and found.metadata.deletion_timestamp is not None:
            _gone(ext, name)  # this module's own, torn down for another test in between: not yet gone
            found = None
        if found is None:
            ext.create_custom_resource_definition(crd(kind))
            made.append(name)
        # else already there (e.g. Chaos Mesh itself): use it
    deadline = time.monotonic() + 60
    for kind in KINDS:
        name = f"{KINDS[kind]}.{GROUP}"
        while True:
            conditions = ext.read_custom_resource_definition(name).status.conditions or []
            if any(c.type == "Established" and c.status == "True" for c in conditions):
                break
            assert time.monotonic() < deadline, f"{name} never became Established"
            time.sleep(0.5)
    namespace = f"fk-chaos-{uuid.uuid4().hex[:8]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    try:
        yield client.CustomObjectsApi(api), namespace
    finally:
        core.delete_namespace(namespace)
        for name in made:
            ext.delete_custom_resource_definition(name)
        for name in made:  # deletion is asynchronous: the next setup must not find a CRD that is going
            _gone(ext, name)


def _crd(ext: client.ApiextensionsV1Api, name: str) -> Any:
    try:
        return ext.read_custom_resource_definition(name)
    except ApiException as e:
        if e.status != 404:
            raise
        return None


def _gone(ext: client.ApiextensionsV1Api, name: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while _crd(ext, name) is not None:
        assert time.monotonic() < deadline, f"{name} was still being deleted after {timeout:g} s"
        time.sleep(0.5)


def test_api_server_accepts_every_exported_object(api):
    objects_api, namespace = api
    objects, _ = chaos_mesh(SHIPPED, custody(SHIPPED, ()), namespace)
    assert objects
    for obj in objects:
        plural = KINDS[obj["kind"]]
        objects_api.create_namespaced_custom_object(GROUP, VERSION, namespace, plural, obj)
        back = objects_api.get_namespaced_custom_object(GROUP, VERSION, namespace, plural, obj["metadata"]["name"])
        assert back["spec"] == obj["spec"], obj["metadata"]["name"]


def test_api_server_refuses_an_object_without_a_mode(api):
    """The CRDs do validate: the acceptance above is not an API server taking anything."""
    objects_api, namespace = api
    objects, _ = chaos_mesh(SHIPPED, custody(SHIPPED, ()), namespace)
    broken = {**objects[0], "metadata": {**objects[0]["metadata"], "name": "fk-no-mode"},
              "spec": {k: v for k, v in objects[0]["spec"].items() if k != "mode"}}
    with pytest.raises(ApiException) as e:
        objects_api.create_namespaced_custom_object(GROUP, VERSION, namespace, KINDS[broken["kind"]], broken)
    assert e.value.status == 422
