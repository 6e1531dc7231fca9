"""A real HTTP listener for the fake platform: every service of the app under /<service>/, answered
from the platform's state (its behaviour table), so the validator's symptom probe and a test's
requests travel a real socket and show in the platform's request counts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Answer = Callable[[str, str], int]  # (service, path) -> the status it answers with (and counts)


class Listener:
    def __init__(self, answer: Answer) -> None:
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                service, _, rest = self.path.lstrip("/").partition("/")
                status = listener.answer(service, "/" + rest)
                body = b"{}"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = _any

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
                pass

        self.answer = answer
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, name="fake-platform-http", daemon=True)
        self.thread.start()

    def url(self, service: str) -> str:
        return f"http://127.0.0.1:{self.port}/{service}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
