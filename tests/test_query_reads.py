"""query_reads.get against a real loopback server: a connection dropped before the answer is tried
again, twice at most; an answer of any status, and a read that times out, are not."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest
import requests

from faultkit import query_reads

Serve = Callable[[socket.socket, int], None]  # (connection, its number from 1) -> reply or drop


def _close(conn: socket.socket, n: int) -> None:
    conn.close()


def _answer(status: str) -> Serve:
    def serve(conn: socket.socket, n: int) -> None:
        conn.sendall(f"HTTP/1.1 {status}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".encode())
        conn.close()
    return serve


@pytest.fixture
def server() -> Iterator[Callable[[Serve], tuple[str, list[int]]]]:
    listeners: list[socket.socket] = []

    def start(serve: Serve) -> tuple[str, list[int]]:
        srv = socket.create_server(("127.0.0.1", 0))
        listeners.append(srv)
        seen: list[int] = []

        def loop() -> None:
            while True:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    return
                seen.append(len(seen) + 1)
                conn.recv(65536)
                serve(conn, len(seen))
        threading.Thread(target=loop, daemon=True).start()
        return f"http://127.0.0.1:{srv.getsockname()[1]}/api", seen

    yield start
    for srv in listeners:
        srv.close()


def test_two_dropped_connections_then_an_answer(server, monkeypatch) -> None:
    monkeypatch.setattr(query_reads, "DELAYS_S", (0.01, 0.01))
    url, seen = server(lambda conn, n: _close(conn, n) if n < 3 else _answer("200 OK")(conn, n))
    r = query_reads.get(url, timeout=3)
    assert (r.status_code, r.text, len(seen)) == (200, "ok", 3)


def test_a_server_that_always_drops_fails_after_three_tries(server, monkeypatch) -> None:
    monkeypatch.setattr(query_reads, "DELAYS_S", (0.01, 0.01))
    url, seen = server(_close)
    with requests.Session() as session, pytest.raises(requests.ConnectionError):
        query_reads.get(url, session, timeout=3)
    assert len(seen) == 3


def test_an_error_status_is_the_servers_answer(server) -> None:
    url, seen = server(_answer("503 Service Unavailable"))
    assert query_reads.get(url, timeout=3).status_code == 503
    assert len(seen) == 1


def test_a_read_that_times_out_is_not_sent_again(server) -> None:
    url, seen = server(lambda conn, n: None)  # holds the connection and never answers
    with pytest.raises(requests.ReadTimeout):
        query_reads.get(url, timeout=0.3)
    assert len(seen) == 1
