"""cartstore: a tiny in-memory key-value store speaking a RESP-like line protocol.

Requests are single lines: "AUTH <password>", "PING", "GET <key>",
"SET <key> <value>" (value = rest of the line), "DEL <key>", "QUIT".
Replies are single lines: "+OK", "+PONG", "$<value>" (hit), "_" (miss),
":<n>" (integer), "-<CODE> <message>" (error).
"""

import os
import signal
import socketserver
import sys
import threading
from typing import Any

from shoplib import Logger, listen_host, require_port

SERVICE = "cartstore"
MAX_LINE = 1 << 20  # refuse absurd lines instead of buffering without bound


class Store:
    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._data.get(key)

    def set(self, key: str, value: str) -> None:
        with self._lock:
            self._data[key] = value

    def delete(self, key: str) -> int:
        with self._lock:
            return 1 if self._data.pop(key, None) is not None else 0


class Session:
    """Per-connection state: whether AUTH succeeded."""

    def __init__(self, password: str) -> None:
        self.password = password
        self.authenticated = not password  # no password configured -> open store


def execute(store: Store, session: Session, line: str) -> str:
    cmd, _, rest = line.strip().partition(" ")
    cmd = cmd.upper()
    if cmd == "QUIT":
        return "+OK"
    if cmd == "AUTH":
        if not session.password:
            return "-ERR AUTH called without any password configured"
        session.authenticated = rest == session.password
        return "+OK" if session.authenticated else "-WRONGPASS invalid password"
    if not session.authenticated:
        return "-NOAUTH Authentication required"
    if cmd == "PING":
        return "+PONG"
    if cmd == "GET":
        if not rest or " " in rest:
            return "-ERR wrong number of arguments for 'GET'"
        value = store.get(rest)
        return "_" if value is None else "$" + value
    if cmd == "SET":
        key, _, value = rest.partition(" ")
        if not key or not value:
            return "-ERR wrong number of arguments for 'SET'"
        store.set(key, value)
        return "+OK"
    if cmd == "DEL":
        if not rest or " " in rest:
            return "-ERR wrong number of arguments for 'DEL'"
        return f":{store.delete(rest)}"
    return f"-ERR unknown command '{cmd}'"


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr: tuple[str, int], store: Store, password: str, log: Logger) -> None:
        self.store, self.password, self.log = store, password, log
        super().__init__(addr, Handler)


class Handler(socketserver.StreamRequestHandler):
    server: Server

    def handle(self) -> None:
        session = Session(self.server.password)
        while True:
            raw = self.rfile.readline(MAX_LINE + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE:
                self._send("-ERR line too long")
                return
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            reply = execute(self.server.store, session, line)
            if reply.startswith("-WRONGPASS"):
                self.server.log.warning("authentication failed", client=self.client_address[0])
            self._send(reply)
            if line.strip().upper() == "QUIT":
                return

    def _send(self, reply: str) -> None:
        self.wfile.write(reply.encode() + b"\r\n")
        self.wfile.flush()


def main() -> None:
    log = Logger(SERVICE)
    port = require_port(log)
    password = os.environ.get("REQUIREPASS", "")
    try:
        server = Server((listen_host(), port), Store(), password, log)
    except OSError as exc:
        log.error(f"cannot listen on port {port}: {exc}")
        sys.exit(1)
    stop = threading.Event()

    def on_signal(*_: Any) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log.info(f"listening on port {server.server_address[1]}", port=port,
             auth_required=bool(password))
    while not stop.wait(0.5):
        pass
    log.info("shutting down")
    server.shutdown()
    server.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
