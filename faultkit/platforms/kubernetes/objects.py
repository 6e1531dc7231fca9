"""Reading the live objects of one workload as plain dicts in the API's JSON shape."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from faultkit.errors import InputError
from faultkit.platforms.kubernetes.connection import Connection, api_error


def plain(conn: Connection, obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = conn.api.sanitize_for_serialization(obj)
    return out


def selector_string(match: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(match.items()))


@dataclass(frozen=True)
class Observed:
    """One moment's view of a Deployment: what completion.rollout_progress judges."""

    deployment: dict[str, Any]
    replicasets: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    slices: list[dict[str, Any]]


def deployment(conn: Connection, namespace: str, name: str) -> dict[str, Any]:
    try:
        return plain(conn, conn.apps.read_namespaced_deployment(name, namespace))
    except ApiException as e:
        if e.status == 404:
            raise InputError(f"no Deployment named {name!r} in namespace {namespace}") from None
        raise api_error(f"read Deployment {name}", e) from None


def endpoint_slices(conn: Connection, namespace: str, service: str) -> list[dict[str, Any]]:
    """The Service's EndpointSlices as plain JSON. Read raw: the client's model refuses a slice whose
    `endpoints` is null, which is what the controller writes for a Service with no ready pod."""
    response = conn.discovery.list_namespaced_endpoint_slice(
        namespace, label_selector=f"kubernetes.io/service-name={service}", _preload_content=False)
    items: list[dict[str, Any]] = json.loads(response.data).get("items") or []
    return items


def services_selecting(conn: Connection, namespace: str, pod_labels: dict[str, str]) -> list[dict[str, Any]]:
    items = conn.core.list_namespaced_service(namespace).items
    out = []
    for svc in items:
        sel = svc.spec.selector or {}
        if sel and all(pod_labels.get(k) == v for k, v in sel.items()):
            out.append(plain(conn, svc))
    return out


def observe(conn: Connection, namespace: str, name: str) -> Observed:
    try:
        dep = deployment(conn, namespace, name)
        sel = selector_string(dep["spec"]["selector"].get("matchLabels") or {})
        rss = [plain(conn, r) for r in conn.apps.list_namespaced_replica_set(namespace, label_selector=sel).items]
        pods = [plain(conn, p) for p in conn.core.list_namespaced_pod(namespace, label_selector=sel).items]
        labels = ((dep["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        slices: list[dict[str, Any]] = []
        for svc in services_selecting(conn, namespace, labels):
            slices += endpoint_slices(conn, namespace, svc["metadata"]["name"])
    except (ApiException, HTTPError) as e:
        raise api_error(f"observe Deployment {name} in {namespace}", e) from None
    return Observed(dep, rss, pods, slices)


