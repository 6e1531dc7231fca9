"""The supervisor's control API: JSON over HTTP on 127.0.0.1, each request carrying the token.

POST /call {"method": ..., "args": {...}} -> {"ok": true, "result": ...}
                                         or {"ok": false, "kind": "PlatformError", "message": ...}
"""

from __future__ import annotations

import hmac
import json
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from faultkit.errors import FaultkitError

TOKEN_HEADER = "X-Faultkit-Token"


def serve(target: Any, token: str) -> ThreadingHTTPServer:
    """Serve `target`'s methods named in target.API on a free loopback port (in a thread)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            if self.path != "/call" or not hmac.compare_digest(self.headers.get(TOKEN_HEADER, ""), token):
                self._send(403, {"ok": False, "kind": "PlatformError", "message": "bad token or path"})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                method, args = body["method"], body.get("args", {})
                if method not in target.API:
                    raise KeyError(method)
            except (ValueError, KeyError, TypeError):
                self._send(400, {"ok": False, "kind": "PlatformError", "message": "malformed request"})
                return
            try:
                result = getattr(target, method)(**args)
                self._send(200, {"ok": True, "result": result})
            except FaultkitError as e:
                self._send(200, {"ok": False, "kind": type(e).__name__, "message": str(e)})
            except Exception as e:  # noqa: BLE001 - the client gets one line, the log the traceback
                traceback.print_exc(file=sys.stderr)
                self._send(
                    200,
                    {
                        "ok": False,
                        "kind": "PlatformError",
                        "message": f"the local supervisor failed: {type(e).__name__}: {e}",
                    },
                )

        def _send(self, code: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True, name="control").start()
    return server
