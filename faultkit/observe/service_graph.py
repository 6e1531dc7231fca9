"""The service graph a set of spans shows: who called whom, counted in spans (issue 31). Pure: spans in,
graph out.

Two signs of a call, as Jaeger's own dependency job reads them:

- a span whose parent span belongs to another service: the parent's service called the span's;
- a client span that no span of another service continues (its callee records no spans, such as a
  database spoken to by a line protocol, or the call failed before it arrived): the callee is the
  service its peer attributes name (`peer.service`, else `server.address`), matched by the host
  part to a service's name or alias. A peer that names no service of the app is listed as
  external, not drawn as an edge.

A graph observed from traces does not depend on how the code builds its addresses, which is where
reading manifests and source misses edges.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass

from faultkit.apps.descriptor import AppDescriptor
from faultkit.apps.observed_graph import GraphDiff, ObservedEdge, compare
from faultkit.observe.jaeger import Span


@dataclass(frozen=True)
class ServiceGraph:
    edges: tuple[ObservedEdge, ...]  # sorted by (caller, callee)
    services: tuple[str, ...]  # services that had spans, sorted
    external: tuple[str, ...]  # peers that name no service of the app, sorted
    spans: int  # spans read
    traces: int  # traces read

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple((e.caller, e.callee) for e in self.edges)


def service_graph(spans: list[Span], app: AppDescriptor) -> ServiceGraph:
    names = _names(app)

    def canon(service: str) -> str:
        return names.get(service.lower(), service)

    by_id = {(s.trace_id, s.span_id): s for s in spans}
    continued: set[tuple[str, str]] = set()  # client spans a span of another service continues
    counts: Counter[tuple[str, str]] = Counter()
    for span in spans:
        parent = by_id.get((span.trace_id, span.parent_id)) if span.parent_id else None
        if parent is not None and parent.service != span.service:
            counts[(canon(parent.service), canon(span.service))] += 1
            continued.add((parent.trace_id, parent.span_id))
    external: set[str] = set()
    for span in spans:
        if span.kind != "client" or not span.peer or (span.trace_id, span.span_id) in continued:
            continue
        callee, caller = peer_service(span.peer, names), canon(span.service)
        if callee is None:
            external.add(span.peer)
        elif callee != caller:
            counts[(caller, callee)] += 1
    return ServiceGraph(edges=tuple(ObservedEdge(a, b, n) for (a, b), n in sorted(counts.items())),
                        services=tuple(sorted({canon(s.service) for s in spans if s.service})),
                        external=tuple(sorted(external)), spans=len(spans),
                        traces=len({s.trace_id for s in spans}))


def compare_graph(graph: ServiceGraph, app: AppDescriptor) -> GraphDiff:
    """Edges observed and not declared (the descriptor misses a call), and declared and not observed."""
    return compare(app, graph.pairs)


def peer_service(peer: str, names: dict[str, str]) -> str | None:
    """The service a peer ("host", "host:port", "[v6]:port") names: its host, or the host's first DNS
    label (`cart.shop.svc.cluster.local`), as a service's name or alias; None for any other."""
    host = host_of(peer).lower()
    if host in names:
        return names[host]
    if _is_ip(host):
        return None
    return names.get(host.split(".", 1)[0])


def host_of(peer: str) -> str:
    if peer.startswith("["):
        return peer[1:].partition("]")[0]
    host, sep, port = peer.rpartition(":")
    return host if sep and port.isdigit() and ":" not in host else peer


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _names(app: AppDescriptor) -> dict[str, str]:
    """Every name and alias of a service, lowercased, to the service's name."""
    names: dict[str, str] = {}
    for s in app.services:
        for alias in s.aliases:
            names.setdefault(alias.lower(), s.name)
    names.update({s.name.lower(): s.name for s in app.services})  # a name wins over another's alias
    return names
