"""Code rollouts, live: done only when no old replica serves; one that never gets ready is undone."""

from __future__ import annotations

import io
import shutil
import threading
from pathlib import Path
from typing import Any

import docker
import pytest
from kubernetes import client

from faultkit.errors import NotReady
from faultkit.platforms.kubernetes import KubernetesPlatform, objects
from faultkit.platforms.kubernetes.completion import rollout_progress
from tests.platforms.kubernetes import recording

pytestmark = [pytest.mark.live, pytest.mark.exclusive]


def _images(shop: KubernetesPlatform, ns: str, apps: client.AppsV1Api, name: str) -> str:
    return str(apps.read_namespaced_deployment(name, ns).spec.template.spec.containers[0].image)


def test_rollout_completes_only_when_no_old_replica_serves(shop: KubernetesPlatform, tmp_path: Path,
                                                          apps_api: client.AppsV1Api) -> None:
    ns = shop.record().namespace
    src = tmp_path / "src"
    assert shop.descriptor.source_dir is not None
    shutil.copytree(shop.descriptor.source_dir, src)
    main = src / "productcatalog" / "main.py"
    main.write_text(main.read_text() + "\n# rebuilt for the rollout test\n")
    first = shop.instances("productcatalog")[0].build
    new = shop.build("productcatalog", str(src))
    assert new.id != first
    seen: list[Any] = []
    stop = threading.Event()
    image = shop.cluster_images.expected(new.location)
    assert image is not None

    def watch() -> None:  # the predicate over what the API server shows while the rollout runs
        while not stop.is_set():
            o = objects.observe(shop.conn, ns, "productcatalog")
            seen.append((o, rollout_progress(o.deployment, o.replicasets, o.pods, o.slices, "productcatalog", image)))
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        shop.rollout("productcatalog", new.id, timeout=120)
    finally:
        stop.set()
        t.join(10)
    assert any(not p.done for _, p in seen), "the watcher saw no moment before completion"
    o = objects.observe(shop.conn, ns, "productcatalog")
    done = rollout_progress(o.deployment, o.replicasets, o.pods, o.slices, "productcatalog", image)
    assert done.done, done.waiting
    if recording.wanted():
        moments, last = [], None
        for obs, p in seen:
            if not p.done and p.waiting != last:
                moments.append(recording.snapshot(obs, "productcatalog", image.digests))
                last = p.waiting
        recording.write(moments, recording.snapshot(o, "productcatalog", image.digests))
    assert [i.build for i in shop.instances("productcatalog")] == [new.id]
    # while an old pod was listed, the predicate said not done
    for obs, p in seen:
        names = {ep["targetRef"]["name"] for s in obs.slices for ep in s.get("endpoints") or []}
        new_pods = {pod["metadata"]["name"] for pod in obs.pods
                    if any(c.get("imageID", "").endswith(new.id.split(":")[-1]) or
                           c.get("imageID", "").rsplit("@", 1)[-1] in shop.cluster_images.digests(new.location)
                           for c in (pod.get("status") or {}).get("containerStatuses") or [])}
        if names - new_pods:
            assert not p.done
    shop.rollout("productcatalog", first, timeout=120)
    assert [i.build for i in shop.instances("productcatalog")] == [first]


NEVER_READY = {
    "sleeps": "import time; time.sleep(3600)",  # starts, never listens: the readiness probe never passes
    "exits": "import sys; sys.exit(3)",  # the process exits at once: the container crash-loops
}


@pytest.fixture(params=sorted(NEVER_READY))
def never_ready(shop: KubernetesPlatform, request: pytest.FixtureRequest) -> Any:
    """An image of shipping whose service never becomes ready, one way or the other."""
    engine = docker.from_env()
    base = shop.builds("shipping")[-1]
    dockerfile = f"FROM {base.location}\nRUN echo '{NEVER_READY[request.param]}' > /app/main.py\n"
    image, _ = engine.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag="minishop/shipping:1.0.0-rc2",
                                   rm=True)
    try:
        yield image
    finally:
        engine.images.remove(image.id, force=True)


def test_a_rollout_that_never_gets_ready_is_reported_and_undone(shop: KubernetesPlatform, never_ready: Any,
                                                                apps_api: client.AppsV1Api) -> None:
    ns = shop.record().namespace
    before = _images(shop, ns, apps_api, "shipping")
    build = shop.instances("shipping")[0].build
    shop.cluster_images.ensure("minishop/shipping:1.0.0-rc2", never_ready.id)
    with pytest.raises(NotReady, match="rollout failed.*undone"):
        shop.rollout("shipping", never_ready.id, timeout=20)
    assert _images(shop, ns, apps_api, "shipping") == before
    assert shop.ready("shipping")
    assert [i.build for i in shop.instances("shipping")] == [build]
