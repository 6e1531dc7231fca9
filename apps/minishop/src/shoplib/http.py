"""Tiny HTTP framework: router, JSON handling, probes, telemetry, graceful stop.

Every request in, but the probe and scrape endpoints, is a SERVER span under the OpenTelemetry
semantic conventions (its context taken from the caller's `traceparent` and `baggage` headers) and
a sample of the `http.server.request.duration` histogram, which /metrics serves (telemetry.py).
"""

import json
import signal
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from opentelemetry import baggage, context
from opentelemetry.trace import SpanKind, Status, StatusCode
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from shoplib import telemetry
from shoplib.config import listen_host, require_port
from shoplib.log import Logger

# Probe and scrape endpoints are not business traffic; counting or tracing them would
# drown the request-rate signal.
_UNCOUNTED = {"/metrics", "/healthz", "/readyz"}
_UNMATCHED = "<unmatched>"


class HTTPError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Request:
    def __init__(self, method: str, raw_path: str, headers: Any, body: bytes) -> None:
        parts = urlsplit(raw_path)
        self.method = method
        self.path = parts.path
        self.query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.headers = headers
        self.body = body
        self.params: dict[str, str] = {}

    def json(self) -> dict[str, Any]:
        try:
            data = json.loads(self.body or b"null")
        except ValueError as exc:
            raise HTTPError(400, "request body is not valid JSON") from exc
        if not isinstance(data, dict):
            raise HTTPError(400, "request body must be a JSON object")
        return data


class Response:
    def __init__(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.status = status
        self.body = body
        self.content_type = content_type


Handler = Callable[[Request], Any]


def _match(template: list[str], path: list[str]) -> dict[str, str] | None:
    if len(template) != len(path):
        return None
    params: dict[str, str] = {}
    for t, p in zip(template, path, strict=True):
        if t.startswith("<") and t.endswith(">"):
            if not p:
                return None
            params[t[1:-1]] = p
        elif t != p:
            return None
    return params


class App:
    def __init__(self, service: str, log: Logger | None = None) -> None:
        self.service = service
        self.log = log or Logger(service)
        self.routes: list[tuple[str, str, list[str], Handler]] = []
        self.ready_check: Callable[[], bool] = lambda: True
        self.telemetry = telemetry.install(service)
        # a service's own prometheus_client metrics go here too
        self.registry = self.telemetry.registry
        self.route("GET", "/healthz")(lambda _r: Response(200, b"ok", "text/plain"))
        self.route("GET", "/readyz")(self._readyz)
        self.route("GET", "/metrics")(
            lambda _r: Response(200, generate_latest(self.telemetry.registry), CONTENT_TYPE_LATEST)
        )

    def route(self, method: str, template: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            self.routes.append((method, template, template.strip("/").split("/"), fn))
            return fn
        return register

    def _readyz(self, _req: Request) -> Response:
        if self.ready_check():
            return Response(200, b"ok", "text/plain")
        return Response(503, b"not ready", "text/plain")

    def dispatch(self, req: Request) -> tuple[str, Response]:
        """Route and run a request; return (route template, response)."""
        segments = req.path.strip("/").split("/")
        allowed = False
        for method, template, parts, fn in self.routes:
            params = _match(parts, segments)
            if params is None:
                continue
            if method != req.method:
                allowed = True
                continue
            req.params = params
            return template, self._run(fn, req)
        if allowed:
            return _UNMATCHED, _json(405, {"error": "method not allowed"})
        return _UNMATCHED, _json(404, {"error": "not found"})

    def _run(self, fn: Handler, req: Request) -> Response:
        try:
            result = fn(req)
        except HTTPError as exc:
            if exc.status >= 500:
                extra = {"dependency": exc.dependency} if hasattr(exc, "dependency") else {}
                self.log.error(exc.message, path=req.path, status=exc.status, **extra)
            return _json(exc.status, {"error": exc.message})
        except Exception as exc:  # last-resort guard: always answer 500, never crash
            self.log.error(f"unhandled error: {type(exc).__name__}: {exc}", path=req.path)
            return _json(500, {"error": "internal error"})
        if isinstance(result, Response):
            return result
        return _json(200, result)

    def make_server(self, host: str, port: int) -> ThreadingHTTPServer:
        app = self

        class _Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                start = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length > 0 else b""
                req = Request(self.command, self.path, self.headers, body)
                if req.path in _UNCOUNTED:
                    self._answer(app.dispatch(req)[1])
                    return
                # the caller's context made current, not only the span's parent: its baggage goes
                # on with this request's own calls
                token = context.attach(telemetry.PROPAGATOR.extract(self.headers))
                try:
                    self._traced(req, start)
                finally:
                    context.detach(token)

            def _traced(self, req: Request, start: float) -> None:
                tel = app.telemetry
                with tel.tracer.start_as_current_span(
                    self.command, kind=SpanKind.SERVER,
                    attributes={"http.request.method": self.command, "url.path": req.path},
                ) as span:
                    route, resp = app.dispatch(req)
                    attrs: dict[str, str | int] = {
                        "http.request.method": self.command,
                        "http.response.status_code": resp.status,
                    }
                    if route != _UNMATCHED:
                        attrs["http.route"] = route
                        span.update_name(f"{self.command} {route}")
                    span.set_attributes(attrs)
                    if resp.status >= 500:
                        span.set_attribute("error.type", str(resp.status))
                        span.set_status(Status(StatusCode.ERROR))
                    # Counted once the answer is decided, before it is written: a caller that hung
                    # up (its timeout) makes the write fail, and its 5xx must still be counted.
                    # The probe's requests are marked on the metric too, so a collector drops them
                    # from what the agent sees, as it drops their spans.
                    origin = baggage.get_baggage(telemetry.ORIGIN_KEY)
                    marked = {**attrs, telemetry.ORIGIN_KEY: str(origin)} if origin else attrs
                    tel.duration.record(time.monotonic() - start, marked)
                    self._answer(resp)

            def _answer(self, resp: Response) -> None:
                self.send_response(resp.status)
                self.send_header("Content-Type", resp.content_type)
                self.send_header("Content-Length", str(len(resp.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(resp.body)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass  # per-request access logs are too noisy; errors are logged in _run

        class _Server(ThreadingHTTPServer):
            request_queue_size = 128
            daemon_threads = True
            allow_reuse_address = True

        return _Server((host, port), _Handler)

    def run(self, on_start: Callable[[], None] | None = None) -> None:
        """Serve until SIGTERM/SIGINT, then exit 0."""
        port = require_port(self.log)
        try:
            server = self.make_server(listen_host(), port)
        except OSError as exc:
            self.log.error(f"cannot listen on port {port}: {exc}")
            sys.exit(1)
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.log.info(f"listening on port {server.server_address[1]}", port=port)
        if on_start:
            on_start()
        # Polling wait keeps the main thread responsive to signals.
        while not stop.wait(0.5):
            pass
        self.log.info("shutting down")
        server.shutdown()
        server.server_close()
        sys.exit(0)


def _json(status: int, obj: Any) -> Response:
    return Response(status, json.dumps(obj).encode())
