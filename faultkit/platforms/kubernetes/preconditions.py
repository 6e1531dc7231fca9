"""What `up` checks on the cluster before it builds anything (issue 29): a namespace it would
create must not exist yet (it used to build and load every image first and refuse 83 s later), and
a namespace handed over with --adopt must hold the app's workloads (it used to be taken over empty
and reported "11 services ready")."""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException

from faultkit.apps.descriptor import AppDescriptor
from faultkit.errors import PlatformError
from faultkit.platforms.kubernetes.connection import Connection, api_error
from faultkit.platforms.kubernetes.namespaces import Namespaces


def check_new(ns: Namespaces, names: list[str]) -> None:
    """Refuse at once when a namespace up would create already exists."""
    for name in names:
        if ns.uid(name) is not None:
            raise PlatformError(f"namespace {name!r} already exists on {ns.conn.server} and faultkit did not create "
                                f"it; choose another with --namespace, or hand it over with --adopt {name}")


def check_given(ns: Namespaces, name: str) -> str:
    """--existing: the namespace must be there already; returns its uid."""
    uid = ns.uid(name)
    if uid is None:
        raise PlatformError(f"namespace {name!r} does not exist on {ns.conn.server}; create it first, or "
                            "drop --existing and faultkit creates it")
    return uid


def check_adopted(conn: Connection, namespace: str, desc: AppDescriptor) -> None:
    """Refuse an adopted namespace that holds none of the app's workloads, naming them. One that holds
    some is taken over: other tooling may deploy only the services it runs (the agent's tests do)."""
    kinds = {"Deployment": conn.apps.list_namespaced_deployment, "StatefulSet": conn.apps.list_namespaced_stateful_set,
             "DaemonSet": conn.apps.list_namespaced_daemon_set}
    found: set[tuple[str, str]] = set()
    try:
        for kind in {s.workload_kind for s in desc.services}:
            if kind in kinds:
                found |= {(kind, o.metadata.name) for o in kinds[kind](namespace).items}
    except ApiException as e:
        raise api_error(f"list the workloads of {namespace}", e) from None
    missing = [f"{s.workload_kind}/{s.workload}" for s in desc.services
               if s.workload_kind in kinds and (s.workload_kind, s.workload) not in found]
    if missing and len(missing) == len(desc.services):
        raise PlatformError(f"--adopt {namespace}: namespace {namespace!r} holds none of {desc.name}'s workloads "
                            f"(missing: {', '.join(missing)}); deploy the app there first, or drop --adopt")
