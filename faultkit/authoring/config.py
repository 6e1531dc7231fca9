"""Config faults: one setting written directly in a manifest, checked against the rules
(catalog/config_rules.py) before an entry is written.

Default categories by kind (SPEC.md section 1 names the categories, not the mapping):
dependency-port and connection-host -> dependency, or database-network when the dependency is a
datastore; connection-password -> authentication; resource-limit -> deployment (a rollout that ships
a wrong limit); port-mismatch and cleared-value -> configuration-bug.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from faultkit.apps import addresses
from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.apps.manifests import WORKLOAD_KINDS, Doc, find_container, get_field, load_manifests, pod_spec
from faultkit.apps.references import loaded_from
from faultkit.authoring.common import (
    EFFECT_TODO,
    catalog_entries,
    check_id,
    entry_probe,
    free_id,
    service_aliases,
    skeleton,
    todo,
)
from faultkit.catalog.config_rules import below_request, kind_mismatch, refusal
from faultkit.catalog.model import entry_from_data
from faultkit.catalog.rules.leakage import find_words, giveaway_words
from faultkit.catalog.vocab import CATEGORIES, CONFIG_KINDS
from faultkit.errors import InputError
from faultkit.workspace import Workspace

DATASTORE = re.compile(r"redis|mongo|postgres|mysql|maria|sql|cassandra|memcache|valkey|couch|db$|store$|cache$", re.I)
DATASTORE_PORTS = {6379, 5432, 3306, 27017, 9042, 11211, 1433, 1521, 5984}


@dataclass(frozen=True)
class Setting:
    """A setting as the manifest writes it."""

    kind: str  # Deployment, StatefulSet, DaemonSet or Service
    workload: str  # the workload name, or Service/<name>
    container: str  # "" for a Service
    field: str
    value: str
    doc: Doc
    loaded_from: str | None = None  # ConfigMap/<name>: the container loads the value, the workload does not write it


def locate(docs: list[Doc], workload: str, container: str | None, field: str) -> Setting:
    """The setting, or an InputError that says why a config fault may not change it."""
    kind, _, name = workload.rpartition("/")
    found = [d for d in docs if d.name == name and (not kind or d.kind == kind)]
    usable = [d for d in found if d.kind in (*WORKLOAD_KINDS, "Service")]
    if not usable:
        if found or kind:
            return _refuse_kind(kind or found[0].kind, name)
        raise InputError(f"no workload named {name!r} in the manifests")
    doc = next((d for d in usable if d.kind in WORKLOAD_KINDS), usable[0])
    if doc.kind == "Service":
        spec, container, ref = doc.body.get("spec", {}), "", f"Service/{name}"
    else:
        names = [c.get("name") for c in pod_spec(doc.body).get("containers") or []]
        if container is None:
            if len(names) != 1:
                raise InputError(f"{name} has containers {', '.join(map(str, names))}; choose one with --container")
            container = str(names[0])
        spec, ref = find_container(docs, name, container), name
    why = refusal(spec, field)
    if why:
        raise InputError(f"{ref} {container + ' ' if container else ''}{field}: {why}")
    value = get_field(spec, field)
    loaded = loaded_from(docs, spec, field.split(".", 1)[1]) if value is None and field.startswith("env.") else None
    if loaded:  # written in the workload, it will shadow the ConfigMap's value
        return Setting(doc.kind, ref, container, field, loaded[1], doc, f"ConfigMap/{loaded[0]}")
    if value is None:
        raise InputError(f"{field} is not written in the manifest of {ref}{'/' + container if container else ''} "
                         f"({doc.file.name}:{doc.line}); only a value written there can change")
    return Setting(doc.kind, ref, container, field, value, doc)


def _refuse_kind(kind: str, name: str) -> Setting:
    if kind == "Secret":
        raise InputError(f"Secret/{name}: secrets are left alone; a config fault changes a setting written in a "
                         "Deployment, StatefulSet, DaemonSet or Service")
    if kind == "ConfigMap":
        raise InputError(f"ConfigMap/{name}: a ConfigMap is indirectly loaded configuration; change a setting "
                         "written in the workload's manifest instead")
    raise InputError(f"{kind}/{name}: a config fault changes a Deployment, StatefulSet, DaemonSet or Service, "
                     f"not a {kind}")


def owner(app: AppDescriptor, setting: Setting) -> str:
    """The app service the setting belongs to."""
    name = setting.workload.removeprefix("Service/")
    for s in app.services:
        if (setting.kind == "Service" and name in (s.name, *s.aliases)) or (
                setting.kind != "Service" and name in s.workloads):
            return s.name
    raise InputError(f"{setting.workload} is not a workload of a service in {app.name}'s descriptor")


def dependency_of(app: AppDescriptor, value: str | None) -> str | None:
    """The app service an address value points at (host, or FQDN host.ns.svc.cluster.local)."""
    a = addresses.parse_with_port(value or "")
    if a is None:
        return None
    host = a.host.split(".")[0]
    return next((s.name for s in app.services if host in (s.name, *s.aliases)), None)


def is_datastore(app: AppDescriptor, service: str | None) -> bool:
    if service is None:
        return False
    spec = app.service(service)
    named = any(DATASTORE.search(n) for n in (spec.name, *spec.aliases))
    return named or any(p.port in DATASTORE_PORTS for p in spec.ports)


def default_category(app: AppDescriptor, kind: str, old: str | None) -> str:
    if kind in ("dependency-port", "connection-host"):
        return "database-network" if is_datastore(app, dependency_of(app, old)) else "dependency"
    return {"connection-password": "authentication", "resource-limit": "deployment"}.get(kind, "configuration-bug")


def default_effect(kind: str, field: str) -> str:
    if kind in ("dependency-port", "connection-host", "connection-password"):
        return "errors"
    if kind == "resource-limit":
        return "oom-restart" if field.endswith(".memory") else EFFECT_TODO
    if kind == "port-mismatch":
        return "errors" if field.endswith(("targetPort", ".port")) else "unavailable"
    return EFFECT_TODO


def plan_config(ws: Workspace, app_name: str, workload: str, container: str | None, field: str,
                value: str | None, kind: str, entry_id: str | None = None, category: str | None = None,
                taken: set[str] | None = None, unique: bool = True, app: AppDescriptor | None = None,
                docs: list[Doc] | None = None) -> dict[str, Any]:
    """A complete entry for the change, or an InputError saying why it is refused."""
    if kind not in CONFIG_KINDS:
        raise InputError(f"--kind {kind!r}: expected one of {', '.join(CONFIG_KINDS)}")
    if category is not None and category not in CATEGORIES:
        raise InputError(f"--category {category!r}: expected one of {', '.join(CATEGORIES)}")
    app = app or load_app(ws, app_name)
    docs = docs if docs is not None else load_manifests(app.manifests_dir)
    setting = locate(docs, workload, container, field)
    new = "" if kind == "cleared-value" and not value else value
    if new is None:
        raise InputError(f"--value is required for a {kind} change")
    why = kind_mismatch(kind, field, setting.value, new)
    if why:
        raise InputError(f"--kind {kind}: {why} (old value {setting.value!r}, new {new!r})")
    spec = find_container(docs, setting.workload, setting.container) if setting.kind != "Service" else {}
    refused = below_request(spec, field, new)
    if refused:
        raise InputError(f"{setting.workload} {field}: {refused}")
    if new == setting.value:
        raise InputError(f"{field} already is {new!r}; the change would change nothing")
    words = find_words(new, giveaway_words(ws.root))
    if words:
        raise InputError(f"the new value {new!r} contains {', '.join(words)}; an agent reads deployed values, "
                         "choose one that reads like an ordinary release")
    service = owner(app, setting)
    for end in (service, dependency_of(app, setting.value)):
        if end and app.target_refusal(end):
            raise InputError(f"{setting.workload} {field}: {app.target_refusal(end)}")
    entry_id = check_id(entry_id) if entry_id else free_id(ws, app.name, f"{app.name}-{setting.workload}-{field}",
                                                            taken or set())
    data = _entry(app, setting, service, new, kind, entry_id, category or default_category(app, kind, setting.value))
    if unique:
        _refuse_duplicate(ws, data)
    return data


def _entry(app: AppDescriptor, s: Setting, service: str, new: str, kind: str, entry_id: str,
           category: str) -> dict[str, Any]:
    leaf = s.field.split(".", 1)[1] if s.field.startswith("env.") else s.field
    shown = f"set to {new}" if new else "emptied"
    callers = app.callers(service)
    log_service = service
    if kind == "port-mismatch" and s.kind == "Service" and callers:
        log_service = app.entry if app.entry in callers else callers[0]  # callers see the refused port
    dep = dependency_of(app, s.value)
    data = skeleton(app, entry_id, f"{s.workload.removeprefix('Service/')} {leaf} {shown}", "config", category,
                    "service", service)
    if s.kind != "Service":  # the version of the service whose workload the change is in
        data["target"]["workload"] = s.workload
    manifest = s.doc.file.relative_to(app.root).as_posix() if s.doc.file.is_relative_to(app.root) else s.doc.file.name
    data.update({
        "artifact": {"kind": "manifest-field", "ref": f"{s.kind}/{s.workload.removeprefix('Service/')}"
                     f"{'/' + s.container if s.container else ''}/{s.field}",
                     "aliases": list(dict.fromkeys([leaf, manifest, *service_aliases(app, service)]))},
        "probe": entry_probe(app),
        "artifact_check": {"kind": "setting", "workload": s.workload, "container": s.container,
                           "field": s.field, "value": s.value},
        "effect": default_effect(kind, s.field),
        "evidence": _evidence(kind, s.field, log_service, service, dep),
        "recovery": _recovery(s),
        "config": {"workload": s.workload, "container": s.container, "field": s.field, "old": s.value,
                   "new": new, "kind": kind, **({"loaded_from": s.loaded_from} if s.loaded_from else {})},
        "log": {"message": todo(f"the log message {log_service} writes while the change is live"),
                "service": log_service},
    })
    return data


def _recovery(s: Setting) -> str:
    where = f"{s.workload}{'/' + s.container if s.container else ''}"
    if s.loaded_from:
        return (f"Remove {s.field} from {where}, where it shadows {s.value!r} from {s.loaded_from}, and roll it "
                "out; wait for readiness.")
    return f"Set {s.field} of {where} back to {s.value!r} and roll it out; wait for readiness."


def _evidence(kind: str, field: str, log_service: str, service: str, dep: str | None) -> dict[str, list[str]]:
    if kind == "resource-limit":
        what = "memory" if field.endswith(".memory") else "cpu"
        return {"metrics": [f"{what} usage of {service}", f"restarts of {service}"], "traces": [service]}
    path = [f"{service} -> {dep}"] if dep else [f"{log_service} -> {service}" if log_service != service else service]
    return {"metrics": [f"server errors of {log_service}"], "traces": path}


def _refuse_duplicate(ws: Workspace, data: dict[str, Any]) -> None:
    key = entry_from_data(data).change_key
    for file, other in catalog_entries(ws, data["app"]):
        if other.change_key == key:
            raise InputError(f"{file} already makes this change ({data['config']['field']} -> "
                             f"{data['config']['new']!r}); two entries may not make the same change")


def password_like(seed: str) -> str:
    """A value that reads like a generated credential, derived from `seed` so runs agree."""
    return hashlib.sha256(seed.encode()).hexdigest()[:16]
