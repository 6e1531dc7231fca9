"""`faultkit apps observe` against a Jaeger query API served here (fast tier): what it reads, what it
prints, what it writes, and its one-line refusals."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from faultkit.apps.observed_graph import load_observed
from faultkit.observe import graph_reader
from faultkit.workspace import Workspace
from tests.helpers.cli import cli_env
from tests.helpers.minishop_signals import add_to_signals


def jaeger_span(trace: str, span_id: str, parent: str, process: str, kind: str, **tags: Any) -> dict[str, Any]:
    refs = [{"refType": "CHILD_OF", "traceID": trace, "spanID": parent}] if parent else []
    return {"traceID": trace, "spanID": span_id, "operationName": "op", "references": refs, "startTime": 1,
            "duration": 2, "processID": process,
            "tags": [{"key": "span.kind", "value": kind}, *({"key": k.replace("_", "."), "value": v}
                                                              for k, v in tags.items())]}


# frontend -> checkout -> payment by parent spans; cart -> cartstore and checkout -> a bank by peer attributes
TRACE = {"traceID": "t1", "processes": {p: {"serviceName": p} for p in ("frontend", "checkout", "payment", "cart")},
         "spans": [jaeger_span("t1", "1", "", "frontend", "server"),
                   jaeger_span("t1", "2", "1", "frontend", "client", server_address="checkout", server_port=5050),
                   jaeger_span("t1", "3", "2", "checkout", "server"),
                   jaeger_span("t1", "4", "3", "checkout", "client", server_address="127.0.0.1", server_port=40001),
                   jaeger_span("t1", "5", "4", "payment", "server"),
                   jaeger_span("t1", "6", "5", "payment", "client", server_address="api.bank.example"),
                   jaeger_span("t1", "7", "1", "frontend", "client", server_address="cart", server_port=7070),
                   jaeger_span("t1", "8", "7", "cart", "server"),
                   jaeger_span("t1", "9", "8", "cart", "client", peer_service="cartstore", db_system="cartstore")]}


class FakeJaeger:
    def __init__(self) -> None:
        self.asked: list[dict[str, list[str]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                url = urlparse(self.path)
                if url.path == "/api/services":
                    body: dict[str, Any] = {"data": sorted(TRACE["processes"])}
                else:
                    fake.asked.append(parse_qs(url.query))
                    body = {"data": [TRACE]}
                raw = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def jaeger(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJaeger]:
    monkeypatch.setattr(graph_reader, "FLUSH_S", 0.0)  # nothing to flush here
    fake = FakeJaeger()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def without_jaeger_env() -> dict[str, str]:
    return {k: v for k, v in cli_env().items() if k != "FAULTKIT_JAEGER"}


def test_observe_reads_the_period_and_reports_every_difference(ws: Workspace, cli, jaeger: FakeJaeger) -> None:
    done = cli("apps", "observe", "minishop", "--jaeger", jaeger.url + "/", "--for", "0.2s", "--json", "--write",
               check=0)
    report = json.loads(done.stdout)
    assert [(e["caller"], e["callee"], e["spans"]) for e in report["edges"]] == [
        ("cart", "cartstore", 1), ("checkout", "payment", 1), ("frontend", "cart", 1), ("frontend", "checkout", 1)]
    assert report["undeclared"] == []
    assert report["external"] == ["api.bank.example"]
    assert ["checkout", "email"] in report["unobserved"] and ["frontend", "cart"] not in report["unobserved"]
    assert (report["spans"], report["traces"], report["written"]) == (9, 1, "apps/minishop/observed-graph.yaml")
    assert {q["service"][0] for q in jaeger.asked} == {"frontend", "checkout", "payment", "cart"}  # those it knows
    start, end = (int(jaeger.asked[0][k][0]) for k in ("start", "end"))
    assert abs(end - start - 200_000) <= 1  # the period, in microseconds
    recorded = load_observed(ws, "minishop")
    assert recorded is not None and recorded.jaeger == jaeger.url and recorded.duration_s == 0.2


def test_a_scoped_observation_reads_one_instances_traces_and_records_its_scope(ws: Workspace, cli,
                                                                              jaeger: FakeJaeger) -> None:
    done = cli("apps", "observe", "minishop", "--jaeger", jaeger.url, "--for", "0.1s", "--scope",
               "k8s.namespace.name=shop-1", "--write", check=0)
    assert "traces over 0.1 s, k8s.namespace.name=shop-1" in done.stdout
    # Jaeger is asked for the attribute with every service's query (it matches a span's resource too)
    assert {q["tags"][0] for q in jaeger.asked} == {'{"k8s.namespace.name": "shop-1"}'}
    recorded = load_observed(ws, "minishop")
    assert recorded is not None and recorded.scope == (("k8s.namespace.name", "shop-1"),)
    assert "scope:\n  k8s.namespace.name: shop-1\n" in (ws.apps_dir / "minishop" / "observed-graph.yaml").read_text()


def test_a_call_the_descriptor_misses_is_reported_and_exits_1(ws: Workspace, cli, jaeger: FakeJaeger) -> None:
    path = ws.apps_dir / "minishop" / "app.yaml"
    path.write_text(path.read_text().replace("  - [checkout, payment]\n", ""))
    done = cli("apps", "observe", "minishop", "--for", "0.1s", env={**cli_env(), "FAULTKIT_JAEGER": jaeger.url},
               check=1)
    assert "undeclared: checkout -> payment\n" in done.stdout
    assert "external peers: api.bank.example\n" in done.stdout
    assert not (ws.apps_dir / "minishop" / "observed-graph.yaml").exists()  # only --write writes


def test_a_jaeger_named_by_the_descriptor_is_read(ws: Workspace, cli, jaeger: FakeJaeger) -> None:
    add_to_signals(ws, f"  traces: {{jaeger: '{jaeger.url}'}}\n")
    done = cli("apps", "observe", "minishop", "--for", "0.1s", "--json", env=without_jaeger_env(), check=0)
    assert json.loads(done.stdout)["jaeger"] == jaeger.url


@pytest.mark.parametrize(("args", "env", "code", "error"), [
    ((), {}, 2, "Error: no Jaeger to read minishop's traces from: give --jaeger URL, set FAULTKIT_JAEGER"),
    (("--jaeger", "k8s://telemetry/jaeger:16686"), {}, 2,
     "Error: --jaeger 'k8s://telemetry/jaeger:16686': not an http(s) URL of Jaeger's query service (a Jaeger in a "
     "cluster: give k8s://NAMESPACE/SERVICE:PORT where a platform reaches it, or open `kubectl port-forward`"),
    ((), {"FAULTKIT_JAEGER": "ftp://x"}, 2, "Error: FAULTKIT_JAEGER 'ftp://x': not an http(s) URL"),
    (("--jaeger", "http://127.0.0.1:{port}", "--for", "0s"), {}, 2, "Error: --for '0s': watch for longer than 0 s"),
    (("--jaeger", "http://127.0.0.1:{port}", "--for", "soon"), {}, 2, "Error: 'soon' is not a duration"),
    (("--jaeger", "http://127.0.0.1:{port}", "--scope", "shop-1"), {}, 2,
     "Error: --scope 'shop-1': expected KEY=VALUE, a resource attribute and its value"),
    (("--jaeger", "http://127.0.0.1:{port}"), {}, 1,
     "Error: Jaeger at http://127.0.0.1:{port} did not answer /api/services (ConnectionError); is it running"),
])
def test_refusals_are_one_line(cli, args: tuple[str, ...], env: dict[str, str], code: int, error: str) -> None:
    port = closed_port()
    done = cli("apps", "observe", "minishop", *(a.format(port=port) for a in args),
               env={**without_jaeger_env(), **env}, check=code)
    assert done.stderr.startswith(error.format(port=port)) and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == ""
