"""Every config and direct fault the rules allow for an application, each a ready-to-validate entry.

Config: every dependency address (a port change and a host change), every credential written in a
manifest, every resource limit, every Service target port (callers and listener disagree), every
address or credential cleared. Direct: every action the platform can carry out, at the action's
first level. Traffic sources (services nobody calls that are not the entry, such as a load
generator) are left out: a fault there is not a fault of the application.
Ids are derived from the change, so a second run finds the same ids and skips them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.apps import addresses, quantities
from faultkit.apps.addresses import Address
from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.apps.manifests import WORKLOAD_KINDS, Doc, load_manifests, pod_spec
from faultkit.apps.references import loaded_vars
from faultkit.authoring.common import catalog_entries, entry_path, render, slug, write_new
from faultkit.authoring.config import dependency_of, password_like, plan_config
from faultkit.authoring.direct import plan_direct
from faultkit.catalog.config_rules import PASSWORD, below_request, refusal
from faultkit.catalog.model import entry_from_data
from faultkit.catalog.vocab import ACTIONS
from faultkit.errors import FaultkitError
from faultkit.workspace import Workspace

SUFFIX = {"dependency-port": "port", "connection-host": "host", "connection-password": "password",
          "cleared-value": "cleared", "resource-limit": "limit", "port-mismatch": "target-port"}


@dataclass(frozen=True)
class FaultCandidate:
    data: dict[str, Any]
    # "new", "exists" (the id's file is there), "duplicate" (another entry makes the change), "refused" (a rule
    # refuses it) or "collision" (an earlier candidate of this run has its id: refused, never suffixed, so a
    # second run derives the same ids)
    status: str
    note: str = ""

    @property
    def id(self) -> str:
        return str(self.data["id"])


@dataclass(frozen=True)
class CandidateSetting:
    workload: str
    container: str | None
    field: str
    new: str
    kind: str


def traffic_sources(app: AppDescriptor) -> set[str]:
    return {s for s in app.service_names if s != app.entry and not app.callers(s)}


def left_alone(app: AppDescriptor) -> set[str]:
    """Services no candidate targets: traffic sources, telemetry and the app's own fault controls."""
    return set(dict(skipped_services(app)))


def skipped_services(app: AppDescriptor) -> list[tuple[str, str]]:
    """(service, why no candidate targets it) for every service left alone, in descriptor order:
    a service skipped without a word (a queue consumer nothing calls) looks like a missed one."""
    sources = traffic_sources(app)
    out = []
    for name in app.service_names:
        if name in app.load:
            out.append((name, "a load generator (the descriptor's load): it makes the traffic, "
                              "a fault there is not a fault of the application"))
        elif name in app.telemetry:
            out.append((name, "telemetry (the descriptor's telemetry): faults must not blind the observer"))
        elif name in app.fault_controls:
            out.append((name, "one of the app's own fault controls (the descriptor's fault_controls): left alone"))
        elif name in sources:
            out.append((name, "nothing calls it and it is not the entry, so it is taken for a traffic source; "
                              "if it serves (a queue consumer), add the edge that reaches it to the descriptor"))
    return out


def config_changes(app: AppDescriptor, docs: list[Doc]) -> Iterator[CandidateSetting]:
    by_workload = {w: s.name for s in app.services for w in s.workloads}
    skip = left_alone(app)
    for doc in docs:
        if doc.kind in WORKLOAD_KINDS and by_workload.get(doc.name) not in (None, *skip):
            for c in pod_spec(doc.body).get("containers") or []:
                yield from _container_changes(app, doc.name, c)
                yield from _loaded_changes(app, docs, by_workload[doc.name], doc.name, c)
        elif doc.kind == "Service" and doc.name in app.service_names and doc.name not in skip:
            yield from _service_changes(doc)


def _container_changes(app: AppDescriptor, workload: str, c: dict[str, Any]) -> Iterator[CandidateSetting]:
    name = str(c.get("name"))
    for item in c.get("env") or []:
        field = f"env.{item.get('name')}"
        value = item.get("value")
        if not isinstance(value, str) or not value or refusal(c, field):
            continue
        a = addresses.parse_with_port(value)
        if a and dependency_of(app, value) in {*app.telemetry, *app.fault_controls}:
            continue  # an address of a collector or a flag service: the observer and the switches stay
        if a and dependency_of(app, value):
            yield CandidateSetting(workload, name, field, _new_port(app, a), "dependency-port")
            yield CandidateSetting(workload, name, field, a.with_host(_new_host(a.host)), "connection-host")
            yield CandidateSetting(workload, name, field, "", "cleared-value")
        elif PASSWORD.search(str(item.get("name"))):
            yield CandidateSetting(workload, name, field, password_like(f"{workload}/{field}/{value}"),
                                   "connection-password")
            yield CandidateSetting(workload, name, field, "", "cleared-value")
    for resource, value in ((c.get("resources") or {}).get("limits") or {}).items():
        if resource in ("cpu", "memory") and quantities.is_quantity(value):
            new = _lower(str(value))
            if resource == "memory" and quantities.memory_problem(new):
                new = quantities.format_bytes(quantities.MEMORY_FLOOR)  # as tight as a runtime allows
            if new != str(value) and not below_request(c, f"resources.limits.{resource}", new):
                yield CandidateSetting(workload, name, f"resources.limits.{resource}", new, "resource-limit")


def _loaded_changes(app: AppDescriptor, docs: list[Doc], service: str, workload: str,
                    c: dict[str, Any]) -> Iterator[CandidateSetting]:
    """Addresses the container loads from a ConfigMap (envFrom) and calls by them, by a declared edge:
    the change writes the var in the workload, over the ConfigMap's value. A loaded var the service
    never calls through (a shared ConfigMap's other addresses, a password its URI already holds) is
    left alone: changing it would change nothing the service does."""
    for var, (_, value) in sorted(loaded_vars(docs, c).items()):
        dep = dependency_of(app, value)
        a = addresses.parse_with_port(value)
        if not a or dep is None or service not in app.callers(dep) or refusal(c, f"env.{var}"):
            continue
        field = f"env.{var}"
        yield CandidateSetting(workload, str(c.get("name")), field, _new_port(app, a), "dependency-port")
        yield CandidateSetting(workload, str(c.get("name")), field, a.with_host(_new_host(a.host)), "connection-host")


def _service_changes(doc: Doc) -> Iterator[CandidateSetting]:
    for i, port in enumerate(doc.body.get("spec", {}).get("ports") or []):
        target = port.get("targetPort", port.get("port"))
        if "targetPort" in port and isinstance(target, int):
            key = port.get("name") or str(i)
            yield CandidateSetting(f"Service/{doc.name}", None, f"ports.{key}.targetPort", str(target + 1),
                                   "port-mismatch")


def _new_port(app: AppDescriptor, a: Address) -> str:
    """The next port nothing of the dependency listens on: reads like a typo or a stale default."""
    dep = app.service(dependency_of(app, a.text) or "")
    used = {p.port for p in dep.ports}
    port = (a.port or 0) + 1
    while port in used:
        port += 1
    return a.with_port(port)


def _new_host(host: str) -> str:
    first, dot, rest = host.partition(".")
    return f"{first}-svc{dot}{rest}"  # a naming-convention mismatch that does not resolve


def _lower(quantity: str) -> str:
    """A quarter of a memory limit, a tenth of a CPU limit: a plausible tightening gone too far."""
    number = "".join(ch for ch in quantity if ch.isdigit() or ch == ".")
    unit = quantity[len(number):]
    if unit in ("Gi", "G"):
        scale, small = (1024, "Mi") if unit == "Gi" else (1000, "M")
        return f"{max(1, int(float(number) * scale / 4))}{small}"
    if unit == "m" or unit == "":
        millis = float(number) * (1 if unit == "m" else 1000)
        return f"{max(10, int(millis / 10))}m"
    return f"{max(1, int(float(number) / 4))}{unit}"


def candidates(ws: Workspace, app_name: str, platform: str = "local", folder: Path | None = None,
               app: AppDescriptor | None = None) -> list[FaultCandidate]:
    """Every candidate; `folder` (drafts) is where they would be written, instead of catalog/<app>/."""
    app = app or load_app(ws, app_name)
    docs = load_manifests(app.manifests_dir)
    existing = {e.change_key: file for file, e in catalog_entries(ws, app.name)}
    out: list[FaultCandidate] = []
    for ch in config_changes(app, docs):
        base = slug(app.name, ch.workload, ch.field)
        suffix = SUFFIX[ch.kind]
        entry_id = (base if base.endswith(suffix) else f"{base}-{suffix}")[:80].strip("-")
        try:
            data = plan_config(ws, app.name, ch.workload, ch.container, ch.field, ch.new, ch.kind, entry_id,
                               unique=False, app=app, docs=docs)
        except FaultkitError as e:  # a rule refuses this one: say so rather than hide it
            out.append(FaultCandidate({"id": entry_id, "app": app.name}, "refused", str(e)))
            continue
        out.append(_unique(_status(ws, data, existing, folder), out))
    skip = left_alone(app)
    for service in app.service_names:
        if service in skip:
            continue
        for action in ACTIONS.values():
            if platform in action.platforms:
                entry_id = slug(app.name, service, action.name)[:80].strip("-")
                data = plan_direct(ws, app.name, service, action.name, entry_id=entry_id, unique=False, app=app)
                out.append(_unique(_status(ws, data, existing, folder), out))
    return out


def _unique(c: FaultCandidate, earlier: list[FaultCandidate]) -> FaultCandidate:
    """A candidate whose id an earlier one of this run already has is refused: writing both would
    make one file of two changes, or stop half-way when the second finds the first's file."""
    first = next((e for e in earlier if e.id == c.id and e.status != "refused"), None)
    if first is None:
        return c
    return FaultCandidate(c.data, "collision", f"id already taken by another candidate ({_change(first)}); not written")


def _change(c: FaultCandidate) -> str:
    d = c.data
    if d.get("config"):
        return f"{d['config']['workload']} {d['config']['field']} {d['config']['kind']}"
    return f"{d.get('target', {}).get('service')} {d.get('direct', {}).get('action')}"


def _status(ws: Workspace, data: dict[str, Any], existing: dict[tuple[str, ...], str],
            folder: Path | None = None) -> FaultCandidate:
    for path in (entry_path(ws, data["app"], data["id"]), *([folder / f"{data['id']}.yaml"] if folder else [])):
        if path.exists():
            return FaultCandidate(data, "exists", f"{path.relative_to(ws.root).as_posix()} exists")
    same = existing.get(entry_from_data(data).change_key)
    if same:
        return FaultCandidate(data, "duplicate", f"{same} makes the same change")
    return FaultCandidate(data, "new")


def write_candidates(ws: Workspace, found: list[FaultCandidate], folder: Path | None = None) -> list[Path]:
    """Write the new ones (to catalog/<app>/, or to `folder`); never overwrite."""
    written = []
    for c in found:
        if c.status == "new":
            path = folder / f"{c.id}.yaml" if folder else entry_path(ws, c.data["app"], c.id)
            write_new(path, render(c.data))
            written.append(path)
    return written
