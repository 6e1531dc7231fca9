"""up and down of minishop with its real images; a namespace faultkit did not create is never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client

from faultkit.catalog.rules.leakage import find_words, giveaway_words
from faultkit.errors import PlatformError
from faultkit.platforms.kubernetes import KubernetesPlatform
from tests.platforms.kubernetes.k8s_support import REPO, new_platform, ns_name, wait_until

pytestmark = [pytest.mark.live, pytest.mark.exclusive]


def _foreign(core: client.CoreV1Api, apps: client.AppsV1Api) -> str:
    """Someone else's namespace holding a Deployment named like one of minishop's (scaled to 0)."""
    name = ns_name("foreign")
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="checkout", labels={"app": "checkout"}),
        spec=client.V1DeploymentSpec(
            replicas=0, selector=client.V1LabelSelector(match_labels={"app": "checkout"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "checkout"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="checkout", image="someone/else:1")]))))
    apps.create_namespaced_deployment(name, dep)
    return name


def _fingerprint(apps: client.AppsV1Api, namespace: str) -> tuple[int, str, tuple[str, ...]]:
    """What a change by anyone but the Deployment controller would move: the spec's generation, the
    image, and who manages its fields. The Deployment controller's own status writes are left out:
    they bump resourceVersion and add its manager whenever it gets to the object, before or after."""
    d = apps.read_namespaced_deployment("checkout", namespace)
    managers = tuple(sorted({m.manager for m in d.metadata.managed_fields or []
                             if m.subresource != "status"}))
    return d.metadata.generation, d.spec.template.spec.containers[0].image, managers


def test_up_down_with_real_images_leaves_a_foreign_namespace_alone(
        tmp_path: Path, kubeconfig: str, core: client.CoreV1Api, apps_api: client.AppsV1Api) -> None:
    foreign = _foreign(core, apps_api)
    try:
        before = _fingerprint(apps_api, foreign)
        # up into the foreign namespace is refused: it exists and faultkit did not create it
        refused = new_platform(tmp_path / "a", kubeconfig, namespace=foreign)
        with pytest.raises(PlatformError, match="already exists.*--adopt"):
            refused.up("minishop", timeout=60)
        assert not refused.is_up()

        p = new_platform(tmp_path / "b", kubeconfig, namespace=ns_name("up"))
        p.up("minishop", timeout=240)
        try:
            rec = p.record()
            insts = p.instances()
            assert {i.service for i in insts} == {s.name for s in p.descriptor.services}
            assert all(i.ready for i in insts), [i for i in insts if not i.ready]
            # every pod runs the image up built, known by the build id the validator records
            assert {i.service: p.cluster_images.location_of(i.build) for i in insts} == rec.images
            _no_giveaways(core, apps_api, rec.namespace)
            with pytest.raises(PlatformError, match="already up"):
                p.up("minishop")
            assert _fingerprint(apps_api, foreign) == before
        finally:
            p.down()
        assert not p.is_up()
        gone = [n.metadata.name for n in core.list_namespace().items if n.metadata.name == rec.namespace]
        assert gone == [], "down returned before the namespace was gone"
        assert _fingerprint(apps_api, foreign) == before
    finally:
        core.delete_namespace(foreign)


def _no_giveaways(core: client.CoreV1Api, apps: client.AppsV1Api, namespace: str) -> None:
    """What an agent can list in the namespace (objects, their labels, annotations, env, images,
    managedFields, events) names neither faults nor faultkit."""
    api = client.ApiClient()
    texts = []
    for items in (apps.list_namespaced_deployment(namespace).items, apps.list_namespaced_replica_set(namespace).items,
                  core.list_namespaced_pod(namespace).items, core.list_namespaced_service(namespace).items,
                  core.list_namespaced_event(namespace).items, core.list_namespaced_config_map(namespace).items):
        texts += [json.dumps(api.sanitize_for_serialization(o), default=str) for o in items]
    words = giveaway_words(REPO)
    found = {w for t in texts for w in find_words(t, words)}
    assert not found, found


def test_adopt_only_records_and_down_deletes_nothing(tmp_path: Path, kubeconfig: str, core: client.CoreV1Api,
                                                     apps_api: client.AppsV1Api) -> None:
    foreign = _foreign(core, apps_api)
    try:
        before = _fingerprint(apps_api, foreign)
        p = new_platform(tmp_path, kubeconfig, adopt=foreign)
        p.up("minishop")
        assert p.record().mode == "adopted"
        assert p.read_field("checkout", "checkout", "image") == "someone/else:1"
        p.down()
        assert core.read_namespace(foreign).status.phase == "Active"
        assert _fingerprint(apps_api, foreign) == before
    finally:
        core.delete_namespace(foreign)


def test_recorded_target_and_refusals(tmp_path: Path, kubeconfig: str) -> None:
    p = new_platform(tmp_path, kubeconfig)
    with pytest.raises(PlatformError, match="nothing is up"):
        p.instances()
    with pytest.raises(PlatformError, match="no such namespace"):
        new_platform(tmp_path, kubeconfig, adopt="fk-does-not-exist").up("minishop")


def _wait_gone(core: client.CoreV1Api, name: str) -> None:
    wait_until(lambda: name not in {n.metadata.name for n in core.list_namespace().items}, 120, f"{name} gone")


__all__ = ["KubernetesPlatform", "_wait_gone"]
