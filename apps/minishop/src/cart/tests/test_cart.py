import io
import json
import socket
import threading

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import main
import store
from shoplib import DependencyError, HTTPError, Logger, request, telemetry
from shoplib.testing import running


class FakeKV:
    def __init__(self):
        self.data = {}

    def get(self, key):
        return self.data.get(key)

    def set(self, key, value):
        self.data[key] = value

    def delete(self, key):
        self.data.pop(key, None)


def test_add_item_merges_quantities():
    items = main.add_item([], "A", 1)
    items = main.add_item(items, "B", 2)
    items = main.add_item(items, "A", 3)
    assert items == [{"product_id": "A", "quantity": 4}, {"product_id": "B", "quantity": 2}]
    assert main.add_item(items, "A", 999)[0]["quantity"] == main.MAX_QUANTITY


def test_parse_item_validation():
    assert main.parse_item({"product_id": "A"}) == ("A", 1)
    for bad in ({"product_id": ""}, {"product_id": "A", "quantity": 0},
                {"product_id": "A", "quantity": True}, {"quantity": 1}):
        with pytest.raises(HTTPError):
            main.parse_item(bad)


def test_http_with_fake_store():
    kv = FakeKV()
    with running(main.build_app(kv)) as addr:
        assert request(addr, "GET", "/cart/u1")[1] == {"user": "u1", "items": []}
        request(addr, "POST", "/cart/u1/items", {"product_id": "A", "quantity": 2})
        status, out = request(addr, "POST", "/cart/u1/items", {"product_id": "A"})
        assert status == 200 and out["items"] == [{"product_id": "A", "quantity": 3}]
        assert json.loads(kv.data["cart:u1"])[0]["quantity"] == 3
        assert request(addr, "DELETE", "/cart/u1")[0] == 200
        assert "cart:u1" not in kv.data
        assert request(addr, "GET", "/cart/bad%20user")[0] == 400


def test_store_unreachable_is_500_with_error_log(monkeypatch):
    monkeypatch.setenv("CARTSTORE_ADDR", "127.0.0.1:1")
    monkeypatch.setenv("CARTSTORE_PASSWORD", "pw")
    with pytest.raises(DependencyError) as exc:
        store.RemoteStore().get("cart:u1")
    assert exc.value.message == "cart store request failed: connection refused"
    app = main.build_app()
    out = io.StringIO()
    app.log = Logger("cart", out)
    with running(app) as addr:
        assert request(addr, "GET", "/cart/u1")[0] == 500
        assert request(addr, "GET", "/readyz")[0] == 200
    record = json.loads(out.getvalue().splitlines()[0])
    assert record["level"] == "ERROR" and record["dependency"] == "cartstore"


def test_readiness_requires_env(monkeypatch):
    monkeypatch.delenv("CARTSTORE_PASSWORD", raising=False)
    monkeypatch.setenv("CARTSTORE_ADDR", "x:1")
    assert not main.env_configured()


@pytest.fixture(scope="module")
def exporter():
    found = InMemorySpanExporter()
    telemetry.install("cart").tracer_provider.add_span_processor(SimpleSpanProcessor(found))
    return found


def serve_once(reply: bytes) -> int:
    """A cartstore that answers one line of one connection with `reply`; returns its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer():
        with listener, listener.accept()[0] as conn:
            conn.makefile("rb").readline()
            conn.sendall(reply)

    threading.Thread(target=answer, daemon=True).start()
    return listener.getsockname()[1]


def test_each_store_call_is_a_client_span_naming_cartstore(monkeypatch, exporter):
    monkeypatch.delenv("CARTSTORE_PASSWORD", raising=False)
    monkeypatch.setenv("CARTSTORE_ADDR", f"127.0.0.1:{serve_once(b'_' + bytes([13, 10]))}")
    exporter.clear()
    assert store.RemoteStore().get("cart:u1") is None
    monkeypatch.setenv("CARTSTORE_ADDR", "127.0.0.1:1")
    with pytest.raises(DependencyError):
        store.RemoteStore().set("cart:u1", "[]")
    ok, failed = exporter.get_finished_spans()
    assert (ok.name, ok.kind, ok.status.status_code) == ("GET", SpanKind.CLIENT, StatusCode.UNSET)
    assert dict(ok.attributes) == {"peer.service": "cartstore", "server.address": "127.0.0.1",
                                   "server.port": int(ok.attributes["server.port"]),
                                   "db.system": "cartstore", "db.operation.name": "GET"}
    assert (failed.name, failed.status.status_code) == ("SET", StatusCode.ERROR)
    assert failed.status.description == "cart store request failed: connection refused"
    assert failed.attributes["error.type"] == "ConnectionRefusedError"
