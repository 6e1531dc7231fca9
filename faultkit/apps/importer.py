"""`faultkit apps import`: an application descriptor derived from real Kubernetes manifests.

Deployments, StatefulSets and DaemonSets are the services; a Service belongs to the workloads whose
pod template labels contain its selector (Helm's app.kubernetes.io/* labels included). An env value
that is an address (host:port, or a URL) whose host names a Service (also svc.ns,
svc.ns.svc.cluster.local) is a dependency edge; `$(VAR)` references are expanded from the same
container's env first. Telemetry settings (OTEL_* and the like) are reported apart: an exporter
endpoint is not a request path. A service whose dependencies cannot be seen in the manifests (it
finds them through a registry at run time, or names nobody and nobody names it) is reported as
unresolved, never guessed. Several workloads one Service selects (`reviews-v1`, `-v2`, `-v3` of
`reviews`) are one service with `versions`. With --source, see source_scan for what it settles.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faultkit.apps import addresses, classify
from faultkit.apps.classify import TELEMETRY
from faultkit.apps.import_check import service_problem
from faultkit.apps.manifests import WORKLOAD_KINDS, Doc, namespace_of, objects_in, pod_spec
from faultkit.apps.reach import reach_counts
from faultkit.apps.references import Reference, configmaps, workload_references
from faultkit.apps.source_scan import configmap_name, service_folders, source_references, unread
from faultkit.errors import InputError

_TAG_VERSION = re.compile(r"^v?\d+(\.\d+)+")
CONNECTION_KEY = re.compile(r"^(host|server|data ?source|address|addr)$", re.I)
HOST_NAME = re.compile(r"(HOST|HOSTNAME|SERVER|ADDR|ADDRESS)$", re.I)
REGISTRY = re.compile(r"nacos|eureka|consul|zookeeper|registry|discovery", re.I)
TRAFFIC = re.compile(r"load|locust|traffic|k6|bench", re.I)
NAME = re.compile(r"^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$")
ENTRY_NAMES = re.compile(r"frontend|gateway|proxy|ui|web", re.I)


@dataclass
class Workload:
    kind: str
    name: str
    namespace: str
    labels: dict[str, str]
    containers: list[dict[str, Any]]
    services: list[Doc] = field(default_factory=list)
    where: str = ""  # file:line of its manifest, for the reason it is skipped

    @property
    def service_name(self) -> str:
        """The name callers use: its Service named like it, else its first regular Service."""
        for doc in self.services:
            if doc.name == self.name:
                return doc.name
        regular = [d for d in self.services if d.body.get("spec", {}).get("clusterIP") != "None"]
        if self.services:
            return (regular or self.services)[0].name
        # no Service: the component name Helm charts label it with, else the workload's own name
        label = self.labels.get("app.kubernetes.io/component") or self.labels.get("app.kubernetes.io/name")
        return label if label and NAME.match(label) else self.name


@dataclass(frozen=True)
class Imported:
    descriptor: dict[str, Any]
    unresolved: tuple[tuple[str, str], ...]  # (service, why its dependencies are not visible)
    telemetry: tuple[tuple[str, str], ...]  # edges through telemetry settings, left out
    external: tuple[tuple[str, str], ...]  # (service, address) naming no Service of the manifests
    files: tuple[Path, ...]
    roles: tuple[tuple[str, str], ...] = ()  # (service, role) of every service that is not the app itself
    controls: tuple[tuple[str, str], ...] = ()  # edges to built-in fault controls, left out
    skipped: tuple[str, ...] = ()  # one line per workload that cannot be a service of a descriptor, and why
    source_files: tuple[tuple[str, int, int], ...] = ()  # --source: (service, files read, files naming a Service)
    unread: tuple[tuple[str, str], ...] = ()  # --source: (service, ConfigMap entry its files never name), no edge


def _workloads(docs: list[Doc]) -> list[Workload]:
    out = []
    for d in docs:
        if d.kind in WORKLOAD_KINDS:
            meta = d.body.get("spec", {}).get("template", {}).get("metadata", {}) or {}
            labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
            out.append(Workload(d.kind, d.name, namespace_of(d), labels,
                                list(pod_spec(d.body).get("containers") or []), where=f"{d.file.name}:{d.line}"))
    # workloads by each label they carry: a Service is matched against the few that carry its
    # selector's first label, not against every workload (quadratic at 3,000 services, issue 32)
    by_label: dict[tuple[str, str], list[Workload]] = {}
    for w in out:
        for item in w.labels.items():
            by_label.setdefault(item, []).append(w)
    for s in (d for d in docs if d.kind == "Service"):
        selector = {str(k): str(v) for k, v in (s.body.get("spec", {}).get("selector") or {}).items()}
        for w in by_label.get(next(iter(selector.items())), []) if selector else []:
            if selector.items() <= w.labels.items() and namespace_of(s) in ("", w.namespace):
                w.services.append(s)
    return out


def resolve(host: str, names: set[str]) -> str | None:
    """The Service a host names: `cart`, `cart.shop`, `cart.shop.svc`, `cart.shop.svc.cluster.local`."""
    found = addresses.cluster_name(host)
    return found[0] if found and found[0] in names else None


def hosts_in(env_name: str, value: str, free_text: bool = False) -> list[tuple[str, bool]]:
    """(host, written as an address) for each host an env value names: URLs and host:port are
    addresses; a bare host counts only in a *_HOST-like variable (or key, in free text)."""
    hosts = []
    for token in addresses.tokens(value):
        key, eq, rest = token.partition("=")
        if eq and CONNECTION_KEY.match(key):  # ADO.NET / libpq key=value connection strings
            a = addresses.parse(rest)
            if a:
                hosts.append((a.host, True))
            continue
        a = addresses.parse(token)
        if a and a.explicit:
            hosts.append((a.host, True))
        elif a and HOST_NAME.search(env_name.replace(".", "_") if free_text else env_name):
            hosts.append((a.host, False))
    return hosts


def import_manifests(name: str, files: list[Path], source: Path | None = None) -> Imported:
    docs = objects_in(files)
    workloads, skipped = _admitted(_workloads(docs))
    if not workloads:
        raise InputError(f"{', '.join(map(str, files))}: no Deployment, StatefulSet or DaemonSet found"
                         + (f" that can be a service ({'; '.join(skipped[:3])})" if skipped else ""))
    maps = configmaps(docs)
    refs = [r for body, w in _workload_docs(docs, workloads)
            for r in workload_references(w.service_name, pod_spec(body), maps)]
    groups = _by_service(workloads)
    services = [_service(g[0], g[1:]) for g in groups]
    _image_aliases(services, groups)
    left_unread: list[Reference] = []
    if source is not None:
        wanted: dict[str, set[str]] = {}
        for r in refs:
            if (cm_name := configmap_name(r)) is not None:
                wanted.setdefault(r.caller, set()).add(cm_name)
        scan = source_references(source, services, wanted)
        refs, left_unread = unread(refs, scan)
        refs += scan.refs
        folders = service_folders(source, services)
        for s in services:
            folder, language = folders.get(s["name"], (None, None))
            if folder:
                s["language"], s["source"] = language, folder
                if folder != s["name"]:
                    s["aliases"] = list(dict.fromkeys([*s.get("aliases", []), folder]))
    svc_names = {d.name for d in docs if d.kind == "Service"}
    graph = _graph(workloads, svc_names, refs)
    names = [s["name"] for s in services]
    counts = tuple((n, scan.read[n], len(graph.named.get(n, ()))) for n in names) if source is not None else ()
    roles = {w.service_name: classify.service_role(_names_of(w), _images(w)) for w in workloads}
    edges, left_out = _split(graph.edges, roles)
    apps = [n for n in names if roles[n] in ("app", "load")]
    unresolved = _unresolved(apps, edges, graph.registry_users)
    descriptor: dict[str, Any] = {
        "schema": "faultkit/app/v1", "name": name,
        "version": _version([w for w in workloads if roles[w.service_name] in ("app", "load")] or workloads),
        "description": f"Imported from {', '.join(sorted({p.name for p in files}))} by faultkit apps import.",
        "manifests": "manifests",
        **({"source": "src"} if source is not None else {}),
        "entry": _entry(workloads, apps, list(edges), {n for n in names if roles[n] == "load"}),
        "services": services,
        "edges": [[a, b, where] if where else [a, b] for (a, b), where in edges.items()],
    }
    for key, role in (("load", "load"), ("telemetry", "telemetry"), ("fault_controls", "fault-control")):
        if any(r == role for r in roles.values()):
            descriptor[key] = [n for n in names if roles[n] == role]
    return Imported(descriptor, tuple(unresolved), tuple(dict.fromkeys(graph.telemetry + left_out["telemetry"])),
                    tuple(dict.fromkeys(graph.external)), tuple(files),
                    tuple((n, roles[n]) for n in names if roles[n] != "app"), tuple(left_out["fault-control"]),
                    tuple(skipped), counts, _unread(left_unread, svc_names))


def _unread(refs: list[Reference], svc_names: set[str]) -> tuple[tuple[str, str], ...]:
    """(service, ConfigMap entry) of each reference left out as unread that names a Service."""
    named = [r for r in refs if any(resolve(h, svc_names) for h, _ in hosts_in(r.name, r.value, r.free_text))]
    return tuple(dict.fromkeys((r.caller, r.found_in or "") for r in named))


def _admitted(workloads: list[Workload]) -> tuple[list[Workload], list[str]]:
    """The workloads that can be services of a descriptor `apps show` accepts, and a line per other one."""
    kept, skipped = [], []
    for w in workloads:
        problem = service_problem(_service(w))
        if problem is None:
            kept.append(w)
        else:
            skipped.append(f"{w.kind} {w.name[:60]!r} ({w.where}): {problem}; left out")
    return kept, skipped


@dataclass(frozen=True)
class _Graph:
    edges: dict[tuple[str, str], str | None]  # (caller, callee) -> where found; None: in the manifest env
    telemetry: list[tuple[str, str]]
    external: list[tuple[str, str]]
    registry_users: dict[str, str]
    named: dict[str, set[str]]  # per caller, the files (not ConfigMaps) with a reference naming a Service


def _graph(workloads: list[Workload], svc_names: set[str], refs: list[Reference]) -> _Graph:
    owner = {s.name: w.service_name for w in workloads for s in w.services}
    edges: dict[tuple[str, str], str | None] = {}
    telemetry: list[tuple[str, str]] = []
    external: list[tuple[str, str]] = []
    registry_users: dict[str, str] = {}
    named: dict[str, set[str]] = {}
    for r in refs:
        for host, explicit in hosts_in(r.name, r.value, r.free_text):
            target = resolve(host, svc_names)
            callee = owner.get(target) if target else None
            if callee not in (None, r.caller) and r.found_in and not r.found_in.startswith("ConfigMap/"):
                named.setdefault(r.caller, set()).add(r.found_in.rpartition(":")[0])
            if callee is None:
                literal_ip = addresses.is_local(host) or addresses.is_ip(host)
                if explicit and not literal_ip and not TELEMETRY.search(r.name) and not r.free_text:
                    external.append((r.caller, r.value if r.found_in is None else f"{r.value} ({r.found_in})"))
            elif callee != r.caller:
                if TELEMETRY.search(r.name):
                    telemetry.append((r.caller, callee))
                elif (r.caller, callee) not in edges or r.found_in is None:  # written in the manifest wins
                    edges[(r.caller, callee)] = r.found_in
                if REGISTRY.search(target or "") or REGISTRY.search(r.name):
                    registry_users.setdefault(r.caller, target or "")
    return _Graph(edges, telemetry, external, registry_users, named)


def _split(edges: dict[tuple[str, str], str | None], roles: dict[str, str]
           ) -> tuple[dict[tuple[str, str], str | None], dict[str, list[tuple[str, str]]]]:
    """Edges of the application graph, and those to or among telemetry and fault controls, left out."""
    kept: dict[tuple[str, str], str | None] = {}
    left: dict[str, list[tuple[str, str]]] = {"telemetry": [], "fault-control": []}
    for (a, b), where in edges.items():
        role = next((roles[x] for x in (b, a) if roles[x] in left), None)
        if role:
            left[role].append((a, b))
        else:
            kept[(a, b)] = where
    return kept, left


def _workload_docs(docs: list[Doc], workloads: list[Workload]) -> list[tuple[dict[str, Any], Workload]]:
    by_name = {(w.kind, w.name): w for w in workloads}
    return [(d.body, by_name[(d.kind, d.name)]) for d in docs if (d.kind, d.name) in by_name]


def _names_of(w: Workload) -> list[str]:
    return [w.service_name, w.name, *(d.name for d in w.services),
            *(w.labels.get(k, "") for k in ("app.kubernetes.io/name", "app.kubernetes.io/component", "app"))]


def _images(w: Workload) -> list[str]:
    return [str(c.get("image", "")) for c in w.containers]


def _by_service(workloads: list[Workload]) -> list[list[Workload]]:
    """The workloads of each service, in manifest order: several workloads one Service selects
    (`reviews-v1`, `-v2`, `-v3` behind `reviews`) are one service that callers reach as one."""
    groups: dict[str, list[Workload]] = {}
    for w in workloads:
        groups.setdefault(w.service_name, []).append(w)
    return list(groups.values())


def _versions(group: list[Workload]) -> list[dict[str, Any]]:
    """Each workload's `version` label (or app.kubernetes.io/version), else its name when these do not
    tell the workloads apart."""
    names = [w.labels.get("version") or w.labels.get("app.kubernetes.io/version") or "" for w in group]
    if "" in names or len(set(names)) < len(names):
        names = [w.name for w in group]
    return [{"version": v, "workload": {"kind": w.kind, "name": w.name}} for v, w in zip(names, group, strict=True)]


def _service(w: Workload, others: list[Workload] | None = None) -> dict[str, Any]:
    primary = next((d for d in w.services if d.name == w.service_name), None)
    ports = []
    for i, p in enumerate((primary.body.get("spec", {}).get("ports") or []) if primary else []):
        if isinstance(p, dict) and isinstance(p.get("port"), int):
            ports.append({"name": str(p.get("name") or f"port-{i}"), "port": p["port"]})
    labels = [w.labels.get(k, "") for k in ("app.kubernetes.io/name", "app.kubernetes.io/component", "app")]
    others = others or []
    aliases = [a for a in dict.fromkeys([*(d.name for d in w.services), w.name, *labels, *(o.name for o in others)])
               if a and a != w.service_name]
    out: dict[str, Any] = {"name": w.service_name, "workload": {"kind": w.kind, "name": w.name},
                           "containers": [str(c.get("name")) for c in w.containers], "ports": ports}
    if aliases:
        out["aliases"] = aliases
    if others:
        out["versions"] = _versions([w, *others])
    return out


def _image_aliases(services: list[dict[str, Any]], groups: list[list[Workload]]) -> None:
    """Add each service's image names (`.../emailservice:v1` -> emailservice) as aliases, unless
    several services share one (one `demo` image with a tag per component names none of them)."""
    names = [{str(c.get("image", "")).rsplit("/", 1)[-1].split("@")[0].split(":")[0] for w in g for c in w.containers}
             for g in groups]
    counts = Counter(n for group in names for n in group)
    for s, group in zip(services, names, strict=True):
        for image in sorted(group):
            if image and counts[image] == 1 and NAME.match(image) and image != s["name"]:
                s["aliases"] = list(dict.fromkeys([*s.get("aliases", []), image]))


def _unresolved(names: list[str], edges: dict[tuple[str, str], str | None], registry: dict[str, str]
                ) -> list[tuple[str, str]]:
    out = []
    linked = {n for e in edges for n in e}
    # a registry user whose peers were found in its configuration or source is resolved by them
    found = {a for (a, b), where in edges.items() if where and b not in registry.values()}
    for n in names:
        if n in registry and n not in found:
            out.append((n, f"finds its dependencies through the registry {registry[n]!r} at run time; "
                           "add its edges by hand"))
        elif len(names) > 1 and n not in linked:
            out.append((n, "its manifest names no dependency and no other service names it; "
                           "its dependencies are not visible in the manifests"))
    return out


def _version(workloads: list[Workload]) -> str:
    """The chart's app.kubernetes.io/version label, else the image tag most workloads share (its
    version part: one image per component tagged `2.1.3-cart`, `2.1.3-ad` shares `2.1.3`; a digest
    pinned after the tag, `:v0.6.8@sha256:...`, is not the tag)."""
    key = "app.kubernetes.io/version"
    labels = Counter(w.labels[key] for w in workloads if key in w.labels)
    images = [str(c.get("image", "")).partition("@")[0] for w in workloads for c in w.containers]  # `:tag@digest`
    raw = [i.rpartition(":")[2] for i in images if ":" in i.rpartition("/")[2]]
    tags = Counter((m.group(0) if (m := _TAG_VERSION.match(t)) else t) for t in raw)
    for found in (labels, tags):
        if found and found.most_common(1)[0][1] > 1:
            return found.most_common(1)[0][0]
    return "0.0.0"


def _entry(workloads: list[Workload], names: list[str], edges: list[tuple[str, str]], load: set[str]) -> str:
    """Where users come in: a LoadBalancer/NodePort Service's workload (one that only load generators
    call, where there are several), else what a load generator calls, else a front-looking name,
    else the service that reaches the most others."""
    callers: dict[str, list[str]] = {b: [] for b in names}
    for a, b in edges:
        if b in callers:
            callers[b].append(a)
    exposed = [w.service_name for w in workloads if w.service_name in callers and any(
        d.body.get("spec", {}).get("type") in ("LoadBalancer", "NodePort") for d in w.services)]
    front = [n for n in exposed if all(c in load for c in callers[n])]
    if exposed:
        return (front or exposed)[0]
    sources = [n for n in names if n in load or (not callers[n] and TRAFFIC.search(n))]
    first_called: dict[str, str] = {}
    for a, b in edges:
        first_called.setdefault(a, b)
    for source in sources:
        if source in first_called:
            return first_called[source]
    fronts = [n for n in names if ENTRY_NAMES.search(n) and n not in sources]
    if fronts:
        return fronts[0]
    reach = reach_counts(names, edges)
    return max(names, key=lambda n: reach[n])  # the first of the largest: max keeps the earliest on ties
