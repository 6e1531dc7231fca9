"""The observed graph recorded beside a descriptor (faultkit/apps/observed_graph.py), and what
`apps show` and lint make of it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.apps.observed_graph import (
    OBSERVED_FILE,
    ObservedEdge,
    RecordedGraph,
    compare,
    load_observed,
    missed_callers,
    missing_edges,
    write_observed,
)
from faultkit.catalog import lint_cache
from faultkit.catalog.lint import lint
from faultkit.errors import InputError
from faultkit.workspace import Workspace
from tests.factories import entry_data, write_entry


def recorded(*edges: tuple[str, str]) -> RecordedGraph:
    return RecordedGraph(app="minishop", observed_at="2026-01-02T03:04:05Z", duration_s=20.0,
                         jaeger="http://127.0.0.1:16686", edges=tuple(ObservedEdge(a, b, 3) for a, b in sorted(edges)),
                         services=("cart", "frontend"), external=("api.bank.example:443",), spans=12, traces=4)


def drop_edge(ws: Workspace, caller: str, callee: str) -> None:
    path = ws.apps_dir / "minishop" / "app.yaml"
    line = f"  - [{caller}, {callee}]\n"
    assert line in path.read_text()
    path.write_text(path.read_text().replace(line, ""))


def test_a_recorded_graph_reads_back_as_written(ws: Workspace) -> None:
    assert load_observed(ws, "minishop") is None
    graph = recorded(("frontend", "cart"), ("cart", "cartstore"))
    path = write_observed(ws, graph)
    assert path == ws.apps_dir / "minishop" / OBSERVED_FILE
    assert load_observed(ws, "minishop") == graph == load_observed(ws.apps_dir / "minishop", "minishop")
    assert path.read_text().startswith("# The call graph faultkit saw in minishop's traces")
    scoped = replace(graph, scope=(("k8s.namespace.name", "shop-1"),))
    write_observed(ws, scoped)
    assert load_observed(ws, "minishop") == scoped


@pytest.mark.parametrize(("text", "error"), [
    ("- a\n", ":1: (file): expected a mapping"),
    ("app: minishop\n", ":1: (file): missing 'observed_at'"),
    ("app: shop\nobserved_at: t\nduration_s: 1\njaeger: j\nedges: []\n", ":1: app: records 'shop', but"),
    ("app: minishop\nobserved_at: t\nduration_s: -1\njaeger: j\nedges: []\n", ":3: duration_s: expected seconds"),
    ("app: minishop\nobserved_at: t\nduration_s: 1\njaeger: j\nedges:\n  - {caller: a, callee: b, spans: 1}\n"
     "  - {caller: a, callee: c, spans: x}\n", ":7: edges[1].spans: expected a count, found 'x'"),
    ("app: minishop\nobserved_at: t\nduration_s: 1\njaeger: j\nedges:\n  - [a, b]\n", ":6: edges[0]: expected"),
    ("app: minishop\nobserved_at: t\nduration_s: 1\njaeger: j\nedges: []\nexternal: [1]\n",
     ":6: external[0]: expected a name, found 1"),
    ("app: minishop\nobserved_at: t\nduration_s: 1\njaeger: j\nscope: [shop]\nedges: []\n",
     ":5: scope: expected a mapping of resource attributes"),
    ("app: minishop\nobserved_at: t\nduration_s: 1\njaeger: j\nscope:\n  k8s.namespace.name: 1\nedges: []\n",
     ":6: scope.k8s.namespace.name: expected text for a resource attribute, found 1"),
])
def test_a_malformed_file_is_one_line_naming_the_file_line_and_value(ws: Workspace, text: str, error: str) -> None:
    path = ws.apps_dir / "minishop" / OBSERVED_FILE
    path.write_text(text)
    with pytest.raises(InputError) as e:
        load_observed(ws, "minishop")
    assert str(e.value).startswith(str(path)) and error in str(e.value) and "\n" not in str(e.value)


def test_missed_callers_reach_the_service_only_through_an_undeclared_edge(ws: Workspace) -> None:
    drop_edge(ws, "checkout", "payment")
    app = load_app(ws, "minishop")
    graph = recorded(("checkout", "payment"), ("frontend", "checkout"))
    assert app.scope("payment") == ("payment",)
    assert missed_callers(app, graph, "payment") == ("checkout", "frontend", "loadgenerator")
    assert missing_edges(app, graph, "payment") == (("checkout", "payment"),)
    assert missed_callers(app, graph, "cart") == ()  # declared edges already bring its callers in
    diff = compare(app, graph.pairs)
    assert diff.undeclared == (("checkout", "payment"),) and ("cart", "cartstore") in diff.unobserved


def test_lint_names_the_callers_an_entry_scope_misses(ws: Workspace) -> None:
    write_entry(ws, entry_data())  # at cart, scope [cart, checkout, frontend]
    assert not [f for f in lint(ws).findings if f.rule == "observed"]
    write_observed(ws, recorded(("payment", "cart"), ("frontend", "cart")))
    found = [f for f in lint(ws).findings if f.rule == "observed"]
    assert [(f.path, f.severity) for f in found] == [("scope", "error")]
    assert found[0].message == ("apps/minishop/observed-graph.yaml shows payment -> cart, which app.yaml does not "
                                "declare, so the scope of cart leaves out callers that reach it: payment; declare "
                                "the calls in app.yaml")
    (ws.apps_dir / "minishop" / OBSERVED_FILE).write_text("edges: 1\n")
    found = [f for f in lint(ws).findings if f.rule == "observed"]
    assert len(found) == 1 and "observed-graph.yaml:1: (file): missing 'app'" in found[0].message


def test_apps_show_prints_the_difference_when_a_graph_is_recorded(ws: Workspace, cli) -> None:
    assert json.loads(cli("apps", "show", "minishop", "--json", check=0).stdout)["observed"] is None
    assert "undeclared" not in cli("apps", "show", "minishop", check=0).stdout
    write_observed(ws, recorded(("payment", "cart"), ("frontend", "cart")))
    observed = json.loads(cli("apps", "show", "minishop", "--json", check=0).stdout)["observed"]
    assert observed["undeclared"] == [["payment", "cart"]]
    assert ["frontend", "cart"] not in observed["unobserved"] and ["cart", "cartstore"] in observed["unobserved"]
    assert observed["edges"][0] == {"caller": "frontend", "callee": "cart", "spans": 3}
    text = cli("apps", "show", "minishop", check=0).stdout
    assert "observed 2026-01-02T03:04:05Z for 20 s (observed-graph.yaml): 2 edges" in text
    assert "  undeclared: payment -> cart\n" in text


def test_the_lint_cache_keys_on_the_file_observe_writes() -> None:
    assert lint_cache.OBSERVED_FILE == OBSERVED_FILE
    assert "apps/observed_graph.py" in lint_cache._SOURCES
