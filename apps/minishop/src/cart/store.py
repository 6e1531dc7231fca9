"""Client for cartstore's line protocol; one short-lived connection per operation.

A fresh connection per HTTP request keeps failure handling trivial (no stale
sockets after a cartstore restart) and is cheap on a local network.

cartstore records no spans (its protocol carries no trace context), so each
operation is a CLIENT span here that names its peer (`peer.service`,
`server.address`, `server.port`): a trace shows the call to cartstore even
though no span of cartstore continues it.
"""

import functools
import os
import socket
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from shoplib import DependencyError
from shoplib.telemetry import SCOPE

TIMEOUT = 2.0
Session = Callable[[Any, list[str]], list[str]]


def store_error(reason: str) -> DependencyError:
    return DependencyError("cartstore", f"cart store request failed: {reason}")


def traced(session: Session) -> Session:
    """Runs a cartstore session inside a CLIENT span named for its command; an
    error span, with the store error's message, when the session fails."""

    @functools.wraps(session)
    def run(store: Any, commands: list[str]) -> list[str]:
        host, _, port = os.environ.get("CARTSTORE_ADDR", "").strip().rpartition(":")
        operation = commands[0].split(" ", 1)[0]
        attrs: dict[str, str | int] = {"peer.service": "cartstore", "db.system": "cartstore",
                                       "db.operation.name": operation}
        if host:
            attrs["server.address"] = host
        if port.isdigit():
            attrs["server.port"] = int(port)
        tracer = trace.get_tracer(SCOPE)
        with tracer.start_as_current_span(operation, kind=SpanKind.CLIENT, attributes=attrs,
                                          set_status_on_exception=False) as span:
            try:
                return session(store, commands)
            except DependencyError as exc:
                span.set_attribute("error.type", type(exc.__cause__ or exc).__name__)
                span.set_status(Status(StatusCode.ERROR, exc.message))
                raise

    return run


def _split_addr(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    if not host or not port.isdigit():
        raise store_error(f"invalid CARTSTORE_ADDR {addr!r}")
    return host, int(port)


class RemoteStore:
    """Reads CARTSTORE_ADDR / CARTSTORE_PASSWORD at each use (they may be rewritten)."""

    @traced
    def _session(self, commands: list[str]) -> list[str]:
        addr = os.environ.get("CARTSTORE_ADDR", "").strip()
        if not addr:
            raise store_error("CARTSTORE_ADDR is not set")
        host, port = _split_addr(addr)
        password = os.environ.get("CARTSTORE_PASSWORD", "")
        lines = ([f"AUTH {password}"] if password else []) + commands
        try:
            with socket.create_connection((host, port), timeout=TIMEOUT) as sock:
                f = sock.makefile("rwb")
                replies = []
                for line in lines:
                    f.write(line.encode() + b"\r\n")
                    f.flush()
                    reply = f.readline().decode("utf-8", errors="replace").rstrip("\r\n")
                    if not reply:
                        raise store_error("connection closed by cartstore")
                    replies.append(reply)
        except ConnectionRefusedError as exc:
            raise store_error("connection refused") from exc
        except socket.gaierror as exc:
            raise store_error(f"name resolution failed for {host}: {exc}") from exc
        except (TimeoutError, socket.timeout) as exc:
            raise store_error("timed out") from exc
        except OSError as exc:
            raise store_error(str(exc) or type(exc).__name__) from exc
        if password:
            auth = replies.pop(0)
            if auth != "+OK":
                raise store_error(f"authentication rejected: {auth.lstrip('-')}")
        for reply in replies:
            if reply.startswith("-"):
                raise store_error(reply.lstrip("-"))
        return replies

    def get(self, key: str) -> str | None:
        reply = self._session([f"GET {key}"])[0]
        return None if reply == "_" else reply[1:]

    def set(self, key: str, value: str) -> None:
        self._session([f"SET {key} {value}"])

    def delete(self, key: str) -> None:
        self._session([f"DEL {key}"])

    def ping(self) -> bool:
        return self._session(["PING"])[0] == "+PONG"
