"""Changing a Deployment and waiting until no old replica serves (completion.py says when).

A change that does not complete in time is undone: the previous pod template is put back and that
rollout is waited for too, so a failed change never leaves the app half-rolled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes.client.exceptions import ApiException

from faultkit.errors import NotReady
from faultkit.platforms.kubernetes import watching
from faultkit.platforms.kubernetes.completion import ExpectedImage, Progress, rollout_progress
from faultkit.platforms.kubernetes.connection import Connection, api_error
from faultkit.platforms.kubernetes.objects import deployment, observe

# what a rollout's progress is read from (objects.observe)
ROLLOUT_KINDS = ("deployments", "replicasets", "pods", "endpointslices")


def wait_rollout(conn: Connection, namespace: str, name: str, container: str, image: ExpectedImage | None,
                 timeout: float) -> Progress:
    """Until the rollout is done or failed, or `timeout` has passed since the container could first be
    ready: the wait adds its readiness probe's initialDelaySeconds, before which no new pod is ready
    (Bank of Anthos' JVM services wait 60 s, so a 60 s limit could never be met)."""
    timeout += readiness_delay(deployment(conn, namespace, name), container)

    def progress() -> Progress:
        o = observe(conn, namespace, name)
        return rollout_progress(o.deployment, o.replicasets, o.pods, o.slices, container, image)

    return watching.until(conn, namespace, ROLLOUT_KINDS, progress, lambda p: bool(p.done or p.failed), timeout)


def readiness_delay(dep: dict[str, Any], container: str) -> float:
    """The seconds the container's readiness probe waits before its first check (0 without one)."""
    for c in dep["spec"]["template"]["spec"].get("containers") or []:
        if c.get("name") == container:
            return float((c.get("readinessProbe") or {}).get("initialDelaySeconds") or 0)
    return 0.0


def patch_template(conn: Connection, namespace: str, name: str, body: dict[str, Any], manager: str) -> None:
    try:
        conn.apps.patch_namespaced_deployment(name, namespace, body, field_manager=manager)
    except ApiException as e:
        raise api_error(f"patch Deployment {name} in {namespace}", e) from None


def change(conn: Connection, namespace: str, name: str, container: str, apply: Callable[[], None],
           undo: Callable[[], None], image: ExpectedImage | None, timeout: float,
           undo_image: ExpectedImage | None = None) -> None:
    """apply(), wait; when it does not complete, undo() and wait again, then raise NotReady."""
    apply()
    p = wait_rollout(conn, namespace, name, container, image, timeout)
    if p.done:
        return
    why = p.failed or f"not complete after {timeout:g}s: {'; '.join(p.waiting[:3])}"
    undo()
    back = wait_rollout(conn, namespace, name, container, undo_image, max(timeout, 60.0))
    undone = "undone" if back.done else f"undo did not complete either ({'; '.join(back.waiting[:2]) or back.failed})"
    raise NotReady(f"Deployment {name} in {namespace}: the rollout failed ({why}); {undone}")
