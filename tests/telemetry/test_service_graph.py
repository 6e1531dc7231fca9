"""The service graph from spans (faultkit/observe/service_graph.py): no network, spans made here."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultkit.apps.descriptor import AppDescriptor, load_descriptor
from faultkit.apps.observed_graph import ObservedEdge
from faultkit.observe.jaeger import Span
from faultkit.observe.service_graph import compare_graph, host_of, service_graph

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def shop() -> AppDescriptor:
    return load_descriptor(REPO / "apps" / "minishop" / "app.yaml")


def span(trace: str, span_id: str, parent: str, service: str, kind: str = "server", peer: str = "") -> Span:
    return Span(trace_id=trace, span_id=span_id, parent_id=parent, service=service, operation="op", kind=kind,
                start_us=0, duration_us=1, error=False, peer=peer)


def checkout_trace(trace: str) -> list[Span]:
    """frontend -> checkout -> payment, each call a client span continued by the callee's server span."""
    return [span(trace, "1", "", "frontend"),
            span(trace, "2", "1", "frontend", "client", "checkout:5050"),
            span(trace, "3", "2", "checkout"),
            span(trace, "4", "3", "checkout", "client", "127.0.0.1:40001"),
            span(trace, "5", "4", "payment")]


def test_a_span_whose_parent_is_in_another_service_is_one_call(shop: AppDescriptor) -> None:
    graph = service_graph(checkout_trace("t1") + checkout_trace("t2"), shop)
    assert graph.edges == (ObservedEdge("checkout", "payment", 2), ObservedEdge("frontend", "checkout", 2))
    assert (graph.services, graph.external, graph.spans, graph.traces) == (
        ("checkout", "frontend", "payment"), (), 10, 2)


def test_a_client_span_no_service_continues_is_a_call_to_its_peer(shop: AppDescriptor) -> None:
    spans = [span("t", "1", "", "cart"),
             span("t", "2", "1", "cart", "client", "cartstore"),
             span("t", "3", "1", "cart", "client", "redis-cart:6379"),  # an alias, with a port
             span("t", "4", "1", "cart", "client", "cart-store.shop.svc.cluster.local:6379"),  # a cluster DNS name
             span("u", "1", "", "cart", "client", "CartStore")]  # a root client span (a readiness check)
    assert service_graph(spans, shop).edges == (ObservedEdge("cart", "cartstore", 4),)


def test_a_peer_that_names_no_service_is_external_not_an_edge(shop: AppDescriptor) -> None:
    spans = [span("t", "1", "", "payment"),
             span("t", "2", "1", "payment", "client", "api.bank.example:443"),
             span("t", "3", "1", "payment", "client", "10.0.0.7:5432"),
             span("t", "4", "1", "payment", "client", "[::1]:8080"),
             span("t", "5", "1", "payment", "client", ""),  # names no peer: nothing to say
             span("t", "6", "1", "payment", "client", "payment:50051")]  # itself: no edge
    graph = service_graph(spans, shop)
    assert graph.edges == ()
    assert graph.external == ("10.0.0.7:5432", "[::1]:8080", "api.bank.example:443")


def test_spans_of_one_service_and_orphans_draw_no_edge(shop: AppDescriptor) -> None:
    spans = [span("t", "1", "", "frontend"), span("t", "2", "1", "frontend", "internal"),
             span("t", "3", "9", "currency"),  # its parent was not read
             span("u", "3", "2", "currency")]  # a parent id of another trace
    assert service_graph(spans, shop).edges == ()


def test_a_service_recorded_under_an_alias_is_that_service(shop: AppDescriptor) -> None:
    spans = [span("t", "1", "", "web", "client", "cartservice:7070"), span("t", "2", "1", "cartservice")]
    assert service_graph(spans, shop).edges == (ObservedEdge("frontend", "cart", 1),)


def test_compare_names_undeclared_and_unobserved_edges(shop: AppDescriptor) -> None:
    spans = [*checkout_trace("t"), span("t", "6", "5", "payment", "client", "email:8025"), span("t", "7", "6", "email")]
    diff = compare_graph(service_graph(spans, shop), shop)
    assert diff.undeclared == (("payment", "email"),)
    assert ("checkout", "payment") not in diff.unobserved and ("frontend", "checkout") not in diff.unobserved
    assert diff.unobserved == tuple(sorted(set(shop.edges) - {("checkout", "payment"), ("frontend", "checkout")}))


@pytest.mark.parametrize(("peer", "host"), [("cart:7070", "cart"), ("cart", "cart"), ("[::1]:80", "::1"),
                                            ("::1", "::1"), ("a.b:x", "a.b:x")])
def test_host_of_a_peer(peer: str, host: str) -> None:
    assert host_of(peer) == host
