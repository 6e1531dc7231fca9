"""JSON-over-HTTP client used for service-to-service calls.

Addresses are read from the environment at every call (never cached) because
the platform may rewrite them between launches; they are opaque "host:port".

Every request is a CLIENT span whose context (and baggage) goes out in the
W3C `traceparent` and `baggage` headers, so one trace crosses the services.
"""

import json
import os
import socket
import urllib.error
import urllib.request
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from shoplib.http import HTTPError
from shoplib.telemetry import PROPAGATOR, SCOPE

DEFAULT_TIMEOUT = 2.0


class DependencyError(HTTPError):
    """A dependency was unreachable or failed; the caller answers 5xx."""

    def __init__(self, dependency: str, message: str, status: int = 500) -> None:
        super().__init__(status, message)
        self.dependency = dependency


def _reason(exc: BaseException) -> str:
    # URLError wraps the socket error; unwrap for a readable cause such as
    # "[Errno 111] Connection refused" or "[Errno -2] Name or service not known".
    if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException):
        exc = exc.reason
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timed out"
    text = str(exc)
    return text or type(exc).__name__


def request(
    addr: str, method: str, path: str, body: Any = None, timeout: float = DEFAULT_TIMEOUT
) -> tuple[int, Any]:
    """Perform one request; return (status, decoded JSON or text).

    Raises OSError/URLError for transport failures; HTTP error statuses are
    returned, not raised, so callers decide how to treat them.
    """
    data = None if body is None else json.dumps(body).encode()
    url = f"http://{addr}{path}"
    host, _, port = addr.rpartition(":")
    attrs: dict[str, str | int] = {"http.request.method": method, "url.full": url,
                                   "server.address": host or addr}
    if port.isdigit():
        attrs["server.port"] = int(port)
    tracer = trace.get_tracer(SCOPE)
    with tracer.start_as_current_span(method, kind=SpanKind.CLIENT, attributes=attrs) as span:
        headers: dict[str, str] = {}
        PROPAGATOR.inject(headers)  # traceparent, and baggage when the context carries any
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        span.set_attribute("http.response.status_code", status)
        if status >= 500:
            span.set_attribute("error.type", str(status))
            span.set_status(Status(StatusCode.ERROR))
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode(errors="replace")


def call(
    dependency: str,
    addr_env: str,
    method: str,
    path: str,
    body: Any = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Any:
    """Call a dependency and return its JSON body.

    Transport failures and 5xx become DependencyError (-> 500 upstream);
    4xx answers are passed through as HTTPError with the same status because
    they describe a client mistake, not an outage.
    """
    addr = os.environ.get(addr_env, "").strip()
    if not addr:
        raise DependencyError(dependency, f"request to {dependency} failed: {addr_env} is not set")
    try:
        status, payload = request(addr, method, path, body, timeout)
    except (OSError, urllib.error.URLError, ValueError) as exc:
        raise DependencyError(
            dependency, f"request to {dependency} failed: {_reason(exc)}"
        ) from exc
    if status >= 500:
        detail = payload.get("error") if isinstance(payload, dict) else payload
        raise DependencyError(
            dependency, f"request to {dependency} failed: HTTP {status}: {detail}"
        )
    if status >= 400:
        detail = payload.get("error") if isinstance(payload, dict) else payload
        raise HTTPError(status, f"{dependency}: {detail}")
    return payload
