"""Reading the live objects of one workload as plain dicts in the API's JSON shape.

Objects are read as the server's JSON (`_preload_content=False`), never through the client's
models: faultkit works on plain dicts, and building a model for every field of every pod only to
serialize it back cost a validation on the cluster more than half of its own CPU time (10.4 s of
18 s in a 76 s validation, measured), on the machine whose load the validation measures.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from faultkit.errors import InputError
from faultkit.platforms.kubernetes.connection import Connection, api_error


def read_json(call: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The answer of one API call (a read or a list) as the server sent it."""
    response = call(*args, _preload_content=False, **kwargs)
    out: dict[str, Any] = json.loads(response.data)
    return out


def items(call: Callable[..., Any], *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """The items of one list call; the server writes `items: null` for none."""
    return read_json(call, *args, **kwargs).get("items") or []


def matches(labels: dict[str, str] | None, match: dict[str, str]) -> bool:
    """A label selector's matchLabels, as the API server applies `selector_string(match)`."""
    return all((labels or {}).get(k) == v for k, v in match.items())


def selector_string(match: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(match.items()))


def workload_selector(conn: Connection, namespace: str, kind: str, name: str) -> str:
    """The label selector of a workload's pods (immutable in apps/v1: read it once where it is reused)."""
    return selector_string(workload(conn, namespace, kind, name)["spec"]["selector"].get("matchLabels") or {})


@dataclass(frozen=True)
class Observed:
    """One moment's view of a Deployment: what completion.rollout_progress judges."""

    deployment: dict[str, Any]
    replicasets: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    slices: list[dict[str, Any]]


def deployment(conn: Connection, namespace: str, name: str) -> dict[str, Any]:
    return workload(conn, namespace, "Deployment", name)


# each kind of workload a service runs as, by the name the API client gives it (read_namespaced_<it>)
WORKLOAD_KINDS = {"Deployment": "deployment", "StatefulSet": "stateful_set", "DaemonSet": "daemon_set"}


def workload(conn: Connection, namespace: str, kind: str, name: str) -> dict[str, Any]:
    """The Deployment, StatefulSet or DaemonSet a service runs as (Bank of Anthos' databases are
    StatefulSets)."""
    if kind not in WORKLOAD_KINDS:
        raise InputError(f"{kind} {name!r}: not a kind of workload faultkit runs ({', '.join(WORKLOAD_KINDS)})")
    try:
        return read_json(getattr(conn.apps, f"read_namespaced_{WORKLOAD_KINDS[kind]}"), name, namespace)
    except ApiException as e:
        if e.status == 404:
            raise InputError(f"no {kind} named {name!r} in namespace {namespace}") from None
        raise api_error(f"read {kind} {name}", e) from None


def pods_of_workloads(conn: Connection, namespace: str,
                      workloads: dict[str, tuple[str, str]]) -> dict[str, list[dict[str, Any]]]:
    """Each service's pods (service -> (kind, name) of the workload it runs as) from one list of the
    namespace's pods and one of each kind of workload asked for, where asking service by service took
    two requests each."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        for kind in sorted({k for k, _ in workloads.values()} & set(WORKLOAD_KINDS)):
            listing = getattr(conn.apps, f"list_namespaced_{WORKLOAD_KINDS[kind]}")
            found |= {(kind, o["metadata"]["name"]): o for o in items(listing, namespace)}
        pods = items(conn.core.list_namespaced_pod, namespace)
    except ApiException as e:
        raise api_error(f"list the pods of namespace {namespace}", e) from None
    out = {}
    for service, (kind, name) in workloads.items():
        if (kind, name) not in found:
            raise InputError(f"no {kind} named {name!r} in namespace {namespace}")
        match = found[(kind, name)]["spec"]["selector"].get("matchLabels") or {}
        out[service] = [p for p in pods if matches(p["metadata"].get("labels"), match)]
    return out


def endpoint_slices(conn: Connection, namespace: str, service: str) -> list[dict[str, Any]]:
    """The Service's EndpointSlices (one with no ready pod has `endpoints: null`)."""
    return items(conn.discovery.list_namespaced_endpoint_slice, namespace,
                 label_selector=f"kubernetes.io/service-name={service}")


def services_selecting(conn: Connection, namespace: str, pod_labels: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for svc in items(conn.core.list_namespaced_service, namespace):
        sel = (svc.get("spec") or {}).get("selector") or {}
        if sel and matches(pod_labels, sel):
            out.append(svc)
    return out


def observe(conn: Connection, namespace: str, name: str) -> Observed:
    try:
        dep = deployment(conn, namespace, name)
        sel = selector_string(dep["spec"]["selector"].get("matchLabels") or {})
        rss = items(conn.apps.list_namespaced_replica_set, namespace, label_selector=sel)
        pods = items(conn.core.list_namespaced_pod, namespace, label_selector=sel)
        labels = ((dep["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        slices: list[dict[str, Any]] = []
        for svc in services_selecting(conn, namespace, labels):
            slices += endpoint_slices(conn, namespace, svc["metadata"]["name"])
    except (ApiException, HTTPError) as e:
        raise api_error(f"observe Deployment {name} in {namespace}", e) from None
    return Observed(dep, rss, pods, slices)


