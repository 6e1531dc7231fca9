"""The local platform's relay (kube-proxy's part) on real loopback sockets: forwarding both ways with
the half-close passed on, resets where no endpoint answers, refusal while disabled, the network
faults' delay and loss."""

from __future__ import annotations

import errno
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from faultkit.platforms.local.addresses import free_port
from faultkit.platforms.local.relay import Relay


@pytest.fixture
def echo() -> Iterator[int]:
    """A server that answers each connection with what it read until the client's half-close."""
    lsock = socket.create_server(("127.0.0.1", 0))
    port = lsock.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
                conn.sendall(b"echo:" + data)

    threading.Thread(target=serve, daemon=True).start()
    yield port
    lsock.close()


def exchange(port: int, payload: bytes = b"ping") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def was_reset(port: int) -> bool:
    """Whether the relay reset the connection, wherever the client's next call met the reset."""
    try:
        exchange(port)
    except (ConnectionResetError, BrokenPipeError):
        return True
    except OSError as e:
        return e.errno == errno.ENOTCONN  # the reset came before the client's half-close
    return False


@pytest.fixture
def relay(echo: int) -> Iterator[Relay]:
    ports = [echo]
    r = Relay("back", 9000, free_port(), lambda: list(ports))
    r.enable()
    yield r
    r.close()


def test_bytes_go_both_ways_and_the_half_close_is_passed_on(relay: Relay) -> None:
    assert exchange(relay.listen_port) == b"echo:ping"
    big = bytes(range(256)) * 4096  # 1 MiB: more than one read, and the writer waits on the reader
    assert exchange(relay.listen_port, big) == b"echo:" + big


def test_no_endpoint_and_a_refusing_endpoint_reset_the_client() -> None:
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))  # bound, never listening: connecting to it is refused
    for endpoints in ([], [dead.getsockname()[1]]):
        r = Relay("back", 9000, free_port(), lambda e=endpoints: list(e))
        r.enable()
        try:
            assert was_reset(r.listen_port), endpoints
        finally:
            r.close()
    dead.close()


def test_a_disabled_relay_refuses_and_listens_again_when_enabled(relay: Relay) -> None:
    relay.disable()
    with pytest.raises(ConnectionRefusedError):
        exchange(relay.listen_port)
    relay.enable()
    assert exchange(relay.listen_port) == b"echo:ping"
    relay.close()
    with pytest.raises(ConnectionRefusedError):
        exchange(relay.listen_port)


def test_loss_resets_every_connection_at_one_and_delay_holds_the_answer(relay: Relay) -> None:
    relay.loss = 1.0
    assert all(was_reset(relay.listen_port) for _ in range(5))
    relay.loss, relay.delay_s = 0.0, 0.3
    started = time.monotonic()
    assert exchange(relay.listen_port) == b"echo:ping"
    assert time.monotonic() - started >= 0.3
    relay.delay_s = 0.0
    started = time.monotonic()
    exchange(relay.listen_port)
    assert time.monotonic() - started < 0.3

