"""A fake Jaeger query service on a real loopback socket: `/api/services` and `/api/traces` in
Jaeger's JSON, for the fake platform's validations. Every query for a window's time range gets one
trace through frontend and cart, started at the range's start; each query is recorded with the
time it came."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

SERVICES = ("cart", "frontend", "loadgenerator")


def trace(start_us: int) -> dict[str, Any]:
    """loadgenerator -> frontend GET /cart -> frontend's client GET -> cart GET /cart."""
    tid = f"{start_us:032x}"
    rows = [("1", "", "p1", "GET", "client"), ("2", "1", "p2", "GET /cart", "server"),
            ("3", "2", "p2", "GET", "client"), ("4", "3", "p3", "GET /cart", "server")]
    spans = [{"traceID": tid, "spanID": sid, "operationName": op, "startTime": start_us + i, "duration": 1000 * (4 - i),
              "processID": process, "tags": [{"key": "span.kind", "type": "string", "value": kind}],
              "references": [{"refType": "CHILD_OF", "traceID": tid, "spanID": parent}] if parent else []}
             for i, (sid, parent, process, op, kind) in enumerate(rows)]
    processes = {"p1": {"serviceName": "loadgenerator"}, "p2": {"serviceName": "frontend"},
                 "p3": {"serviceName": "cart"}}
    return {"traceID": tid, "spans": spans, "processes": processes}


class FakeJaeger:
    def __init__(self) -> None:
        self.queries: list[tuple[float, dict[str, str]]] = []  # (when, the query's parameters)
        jaeger = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                url = urlparse(self.path)
                params = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/api/services":
                    data: list[Any] = list(SERVICES)
                else:
                    jaeger.queries.append((time.time(), params))
                    data = [trace(int(params["start"]))] if params.get("service") in SERVICES else []
                body = json.dumps({"data": data}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, name="fake-jaeger", daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
