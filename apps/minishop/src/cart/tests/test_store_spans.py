"""Each cartstore call is a CLIENT span naming its peer: cartstore records no spans of its own."""

import socket
import threading

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import store
from shoplib import DependencyError, telemetry


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
