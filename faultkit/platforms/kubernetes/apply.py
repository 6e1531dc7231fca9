"""Bring the app's manifests into a namespace: images rewritten to the built ones, server-side apply.

Every object is applied into the one namespace faultkit works in (a namespace in a manifest is
overridden, cluster-scoped kinds are refused) under a field manager named after the app, never
after faultkit: managedFields are readable by anyone who can read the object.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import DynamicApiError

from faultkit.apps import manifests
from faultkit.apps.descriptor import AppDescriptor
from faultkit.errors import InputError
from faultkit.images.naming import refuse_leaks
from faultkit.platforms.kubernetes import watching
from faultkit.platforms.kubernetes.connection import Connection, api_error

NAMESPACED = {"Deployment", "StatefulSet", "DaemonSet", "Service", "ConfigMap", "Secret", "ServiceAccount",
              "PersistentVolumeClaim", "Job", "CronJob", "Role", "RoleBinding", "NetworkPolicy", "Ingress",
              "PodDisruptionBudget", "HorizontalPodAutoscaler"}


def field_manager(app: str) -> str:
    return f"{app}-release"


def telemetry_env(endpoint: str, namespace: str) -> list[dict[str, Any]]:
    """What every container's OpenTelemetry SDK is told when up was given an OTLP endpoint: where to
    export, often enough for windows of seconds (the SDK's default metric interval is 60 s), and
    which pod and namespace its telemetry comes from, as resource attributes set the way the
    OpenTelemetry Operator sets them (what the collector's k8sattributes processor would add), which
    Prometheus labels k8s_pod_name and k8s_namespace_name. Nothing in them names faultkit: the
    agent reads every pod's env."""
    pod = "OTEL_RESOURCE_ATTRIBUTES_POD_NAME"
    return [
        {"name": pod, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": endpoint},
        {"name": "OTEL_METRIC_EXPORT_INTERVAL", "value": "1000"},
        {"name": "OTEL_BSP_SCHEDULE_DELAY", "value": "500"},
        {"name": "OTEL_RESOURCE_ATTRIBUTES", "value": f"k8s.pod.name=$({pod}),k8s.namespace.name={namespace}"},
    ]


def _add_env(container: dict[str, Any], extra: list[dict[str, Any]]) -> None:
    """Append `extra` to a container's env; a variable the manifest sets itself keeps its value."""
    env = container.setdefault("env", [])
    have = {e.get("name") for e in env}
    env.extend(e for e in extra if e["name"] not in have)


def render(app: AppDescriptor, namespace: str, images: Mapping[str, str], root: Path,
           otlp_endpoint: str = "") -> list[dict[str, Any]]:
    """The objects to apply: the descriptor's manifests in `namespace`, each service's containers
    running `images[service]` (pulled only when the node does not have it), and with an OTLP
    endpoint every container exporting its telemetry there (telemetry_env)."""
    docs = manifests.load_manifests(app.manifests_dir)
    out: list[dict[str, Any]] = []
    for doc in docs:
        if doc.kind not in NAMESPACED:
            raise InputError(f"{doc.file}:{doc.line}: {doc.kind} {doc.name!r} is not a namespaced kind faultkit "
                             "applies; "
                             "the platform works inside one namespace only")
        body = copy.deepcopy(doc.body)
        body.setdefault("metadata", {})["namespace"] = namespace
        out.append(body)
    for spec in app.services:
        if spec.name not in images:
            continue
        body = _workload(out, spec.workload_kind, spec.workload)
        for c in manifests.pod_spec(body).get("containers") or []:
            if c.get("name") in spec.containers:
                c["image"] = images[spec.name]
                c["imagePullPolicy"] = "IfNotPresent"
    if otlp_endpoint:
        for body in out:
            if body.get("kind") in (*manifests.WORKLOAD_KINDS, "Job"):  # what pod_spec reads containers of
                for c in manifests.pod_spec(body).get("containers") or []:
                    _add_env(c, telemetry_env(otlp_endpoint, namespace))
    refuse_leaks(root, [(f"{o['kind']}/{o['metadata'].get('name')}", json.dumps(o, sort_keys=True)) for o in out])
    return out


def _workload(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    for o in objects:
        if o.get("kind") == kind and (o.get("metadata") or {}).get("name") == name:
            return o
    raise InputError(f"the descriptor names {kind}/{name}, which is not in the manifests")


def server_side_apply(conn: Connection, objects: list[dict[str, Any]], manager: str) -> None:
    dyn = DynamicClient(conn.api)
    for body in objects:
        what = f"apply {body['kind']}/{body['metadata'].get('name')} in {body['metadata']['namespace']}"
        try:
            resource = dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"])
            dyn.server_side_apply(resource, body=body, namespace=body["metadata"]["namespace"],
                                  field_manager=manager, force_conflicts=True)
        except (ApiException, DynamicApiError) as e:
            raise api_error(what, e) from None


def delete_applied(conn: Connection, objects: list[dict[str, Any]], timeout: float = 180.0) -> None:
    """Delete what `server_side_apply` applied and wait until no pod of it is left in the namespace
    (a namespace made for the app holds only the app's pods), so the next `up` starts clean."""
    dyn = DynamicClient(conn.api)
    spaces = sorted({o["metadata"]["namespace"] for o in objects})
    for body in objects:
        try:
            resource = dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"])
            dyn.delete(resource, name=body["metadata"]["name"], namespace=body["metadata"]["namespace"],
                       body={"propagationPolicy": "Background"})
        except (ApiException, DynamicApiError) as e:
            if getattr(e, "status", None) != 404:
                raise api_error(f"delete {body['kind']}/{body['metadata'].get('name')}", e) from None
    deadline = time.monotonic() + timeout
    for ns in spaces:
        def emptied(ns: str = ns) -> bool:
            return not conn.core.list_namespaced_pod(ns).items

        if not watching.until(conn, ns, ("pods",), emptied, bool, max(0.0, deadline - time.monotonic())):
            raise api_error(f"delete the app in {ns}", TimeoutError(f"pods still there after {timeout:g}s"))
