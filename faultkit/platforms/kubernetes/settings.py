"""Config faults on the live objects: read a field by the catalog's path, patch it, read it back.

Paths are faultkit/apps/manifests.py's grammar (`env.PAYMENT_ADDR`, `resources.limits.memory`,
`ports.http.targetPort` on workload `Service/<name>`), applied to the object the API server holds
now, not to the repository's files. A patch replaces the one container (or the Service's ports)
with a JSON patch guarded by a `test` of the old content, so a concurrent change is refused rather
than overwritten, and setting None removes the field or env var, which is how a revert restores a
field that was absent.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client.exceptions import ApiException

from faultkit.apps import manifests
from faultkit.errors import InputError, NotReady, PlatformError
from faultkit.platforms.kubernetes import objects, watching
from faultkit.platforms.kubernetes.completion import current_replicaset
from faultkit.platforms.kubernetes.connection import Connection, api_error
from faultkit.platforms.kubernetes.rollouts import wait_rollout

OLD_STOP_S = 30.0  # how long a scaled-down ReplicaSet's pods may take to stop counting as ready


def bare(workload: str) -> str:
    kind, sep, name = workload.partition("/")
    return name if sep and kind in manifests.WORKLOAD_KINDS else workload


def _service(conn: Connection, namespace: str, name: str) -> dict[str, Any]:
    try:
        return objects.read_json(conn.core.read_namespaced_service, name, namespace)
    except ApiException as e:
        if e.status == 404:
            raise InputError(f"no Service named {name!r} in namespace {namespace}") from None
        raise api_error(f"read Service {name}", e) from None


def _container(dep: dict[str, Any], container: str) -> tuple[int, dict[str, Any]]:
    for i, c in enumerate(manifests.pod_spec(dep).get("containers") or []):
        if c.get("name") == container:
            return i, c
    names = [c.get("name") for c in manifests.pod_spec(dep).get("containers") or []]
    raise InputError(f"Deployment {dep['metadata']['name']} has no container {container!r} (it has {names})")


def read(conn: Connection, namespace: str, workload: str, container: str, path: str) -> str | None:
    if workload.startswith("Service/"):
        return manifests.get_field(_service(conn, namespace, workload.split("/", 1)[1]).get("spec") or {}, path)
    _, c = _container(objects.deployment(conn, namespace, bare(workload)), container)
    return manifests.get_field(c, path)


def patch(conn: Connection, namespace: str, workload: str, container: str, path: str, value: str | None,
          timeout: float, manager: str) -> None:
    """Set the field and wait for it to be in force; raise NotReady (leaving the change applied and no
    old replica running, as a real bad rollout would) when the new pods never become ready."""
    if workload.startswith("Service/"):
        _patch_service(conn, namespace, workload.split("/", 1)[1], path, value, timeout, manager)
        return
    name = bare(workload)
    dep = objects.deployment(conn, namespace, name)
    i, old = _container(dep, container)
    new = manifests.set_field(old, path, value)
    if new != old:
        ops = [{"op": "test", "path": f"/spec/template/spec/containers/{i}", "value": old},
               {"op": "replace", "path": f"/spec/template/spec/containers/{i}", "value": new}]
        _json_patch(conn, "deployment", namespace, name, ops, manager)
    # the value may already be set by a run killed while its rollout went on (recover replays the undo):
    # it is in force only once that rollout is complete too, so wait either way
    p = wait_rollout(conn, namespace, name, container, None, timeout)
    if not p.done:
        stopped = _stop_old_replicas(conn, namespace, name)
        why = p.failed or "; ".join(p.waiting[:3])
        raise NotReady(f"{workload}: {path} is set but the new pods did not become ready within {timeout:g}s ({why}); "
                       f"the old replicas were stopped ({stopped}) so none keeps serving")
    if read(conn, namespace, workload, container, path) != value:
        raise PlatformError(f"{workload}: {path} reads back {read(conn, namespace, workload, container, path)!r}, "
                            f"not {value!r}; something else changed it")


def _json_patch(conn: Connection, kind: str, namespace: str, name: str, ops: list[dict[str, Any]],
                manager: str) -> None:
    call = conn.apps.patch_namespaced_deployment if kind == "deployment" else conn.core.patch_namespaced_service
    try:
        call(name, namespace, ops, field_manager=manager)  # a list body is sent as a JSON patch
    except ApiException as e:
        if e.status == 422 and "test" in (e.body or ""):
            raise PlatformError(f"{kind} {name} in {namespace} changed while faultkit patched it; retry") from None
        raise api_error(f"patch {kind} {name} in {namespace}", e) from None


def _stop_old_replicas(conn: Connection, namespace: str, name: str) -> str:
    """Scale every older ReplicaSet to 0. The Deployment controller does not scale an old ReplicaSet
    back up (it only ever scales old ones down), and reverting the template brings it back."""
    o = objects.observe(conn, namespace, name)
    current = current_replicaset(o.deployment, o.replicasets)
    done = []
    for rs in o.replicasets:
        if current is not None and rs["metadata"]["uid"] == current["metadata"]["uid"]:
            continue
        if int((rs.get("spec") or {}).get("replicas") or 0) > 0:
            conn.apps.patch_namespaced_replica_set_scale(rs["metadata"]["name"], namespace, {"spec": {"replicas": 0}})
            done.append(rs["metadata"]["name"])
    _await_no_old_ready(conn, namespace, name, set(done))
    return ", ".join(done) or "none were running"


def _await_no_old_ready(conn: Connection, namespace: str, name: str, stopped: set[str],
                        timeout: float = OLD_STOP_S) -> None:
    """Return once the stopped ReplicaSets count no ready replica: NotReady promises that none
    serves, and a scaled-down ReplicaSet counts its old pod ready until the node reports it stopped
    (seconds on a loaded node)."""
    def still_ready() -> list[str]:
        return [rs["metadata"]["name"] for rs in objects.observe(conn, namespace, name).replicasets
                if rs["metadata"]["name"] in stopped and int((rs.get("status") or {}).get("readyReplicas") or 0)]

    ready = watching.until(conn, namespace, ("replicasets",), still_ready, lambda r: not r, timeout) if stopped else []
    if ready:
        raise PlatformError(f"deployment {name} in {namespace}: the old ReplicaSets {', '.join(ready)} still count "
                            f"ready replicas {timeout:g}s after they were scaled to 0; check the node")


def _patch_service(conn: Connection, namespace: str, name: str, path: str, value: str | None, timeout: float,
                   manager: str) -> None:
    svc = _service(conn, namespace, name)
    old = svc.get("spec") or {}
    new = manifests.set_field(old, path, value)
    if new.get("ports") == old.get("ports") and new == old:
        return
    if set(new) - {"ports"} != set(old) - {"ports"} or any(new[k] != old[k] for k in new if k != "ports"):
        raise InputError(f"Service/{name}: {path}: faultkit patches a Service's ports only")
    ops = [{"op": "test", "path": "/spec/ports", "value": old.get("ports")},
           {"op": "replace", "path": "/spec/ports", "value": new.get("ports")}]
    _json_patch(conn, "service", namespace, name, ops, manager)
    _wait_slices(conn, namespace, name, timeout)
    got = read(conn, namespace, f"Service/{name}", "", path)
    if got != value:
        raise PlatformError(f"Service/{name}: {path} reads back {got!r}, not {value!r}")


def _wait_slices(conn: Connection, namespace: str, name: str, timeout: float) -> None:
    """Until the EndpointSlice controller has written the new target ports (kube-proxy programs from them)."""
    def written() -> bool:
        svc = _service(conn, namespace, name)
        want = sorted(str(p.get("targetPort", p.get("port"))) for p in svc["spec"].get("ports") or [])
        slices = objects.endpoint_slices(conn, namespace, name)
        named = {str(p.get("name") or ""): p for p in svc["spec"].get("ports") or []}
        got = sorted(str(_target(named, pt.get("name"), pt.get("port"))) for s in slices for pt in s.get("ports") or [])
        return not slices or got == want

    watching.until(conn, namespace, ("endpointslices",), written, bool, timeout)


def _target(named: dict[str, dict[str, Any]], port_name: str | None, number: int | None) -> object:
    spec = named.get(port_name or "")
    tp = (spec or {}).get("targetPort")
    return tp if isinstance(tp, str) else number
