"""Spans from Jaeger's HTTP query API (`/api/services`, `/api/traces`), read into one flat shape.

Jaeger serves this API in v1 and v2 alike (jaeger-query, or the `jaeger_query` extension of a v2
distribution). Only what faultkit measures is kept of a span: its service and operation, its kind,
its parent, its duration, whether it failed (OpenTelemetry's status ERROR, which Jaeger writes as
the tag `error=true`, or `otel.status_code=ERROR`), and the peer attributes a client span names its
callee by (the semantic conventions' `server.address` and `server.port`, and the older `peer.service`,
`net.peer.name` and `net.peer.port`).

Only an http(s) URL is read here: a Jaeger inside a cluster, given as `k8s://NAMESPACE/SERVICE:PORT`,
is reached through the platform's port-forward first (Platform.query_address).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

from faultkit import query_reads
from faultkit.observe import query_url

TIMEOUT_S = 10.0
TRACE_LIMIT = 1500  # traces asked for per service and query: Jaeger returns the newest first
PEER_KEYS = ("peer.service", "server.address", "net.peer.name")
PORT_KEYS = ("server.port", "net.peer.port")


class JaegerError(Exception):
    """Jaeger did not answer, or answered with something that is not its API's JSON."""


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root span
    service: str
    operation: str
    kind: str  # "server", "client", "internal", "producer", "consumer", or "" when not recorded
    start_us: int
    duration_us: int
    error: bool
    peer: str  # the callee a client span names ("host" or "host:port"); "" when it names none


def check_url(url: str, option: str = "--jaeger", in_cluster: bool = False) -> str:
    """The Jaeger query URL without a trailing slash, or a UsageError that names the option."""
    return query_url.check_url(url, option, "Jaeger's query service", "a Jaeger", in_cluster)


def get_data(url: str, path: str, params: dict[str, Any] | None = None) -> Any:
    """The `data` member of one API answer."""
    try:
        resp = query_reads.get(f"{url}{path}", params=params, timeout=TIMEOUT_S)
    except requests.RequestException as e:
        raise JaegerError(f"Jaeger at {url} did not answer {path} ({type(e).__name__})") from None
    if resp.status_code != 200:
        raise JaegerError(f"Jaeger at {url} answered {path} with HTTP {resp.status_code}")
    try:
        body = resp.json()
    except ValueError:
        raise JaegerError(f"Jaeger at {url} answered {path} with something that is not JSON") from None
    if not isinstance(body, dict) or "data" not in body:
        raise JaegerError(f"Jaeger at {url} answered {path} without a `data` member")
    return body["data"] if body["data"] is not None else []


def services(url: str) -> list[str]:
    """The services Jaeger holds spans of."""
    return sorted(str(s) for s in get_data(url, "/api/services"))


def read_spans(url: str, services_wanted: list[str] | tuple[str, ...], start: float, end: float,
               scope: Mapping[str, str] | None = None, limit: int = TRACE_LIMIT) -> list[Span]:
    """Every span of the traces that touch any of `services_wanted` between `start` and `end` (epoch
    seconds), each trace once, sorted by trace and start time. A service Jaeger has never seen
    contributes nothing. With a `scope` (resource attributes, such as {"k8s.namespace.name": NS}),
    only traces with a span of the service that carries them: Jaeger matches a tag against a span's
    own attributes and its resource's, so another instance's traces stay out, and out of the limit."""
    known = set(services(url))
    traces: dict[str, dict[str, Any]] = {}
    for service in services_wanted:
        if service not in known:
            continue
        params = {"service": service, "start": int(start * 1e6), "end": int(end * 1e6), "limit": limit}
        if scope:
            params["tags"] = json.dumps(dict(scope), sort_keys=True)
        for trace in get_data(url, "/api/traces", params):
            traces.setdefault(str(trace.get("traceID", "")), trace)
    spans = [span for trace in traces.values() for span in _spans(trace)]
    return sorted(spans, key=lambda s: (s.trace_id, s.start_us, s.span_id))


def _spans(trace: dict[str, Any]) -> list[Span]:
    processes = trace.get("processes") or {}
    out: list[Span] = []
    for raw in trace.get("spans") or []:
        tags = {str(t.get("key")): t.get("value") for t in raw.get("tags") or []}
        parent = next((str(r.get("spanID")) for r in raw.get("references") or []
                       if r.get("refType") == "CHILD_OF" and r.get("traceID") == raw.get("traceID")), "")
        service = str((processes.get(raw.get("processID")) or {}).get("serviceName", ""))
        error = tags.get("error") in (True, "true") or str(tags.get("otel.status_code", "")).upper() == "ERROR"
        out.append(Span(trace_id=str(raw.get("traceID", "")), span_id=str(raw.get("spanID", "")), parent_id=parent,
                        service=service, operation=str(raw.get("operationName", "")),
                        kind=str(tags.get("span.kind", "")), start_us=int(raw.get("startTime", 0)),
                        duration_us=int(raw.get("duration", 0)), error=error, peer=_peer(tags)))
    return out


def _peer(tags: dict[str, Any]) -> str:
    host = next((str(tags[k]) for k in PEER_KEYS if tags.get(k)), "")
    port = next((str(tags[k]) for k in PORT_KEYS if tags.get(k) not in (None, "")), "")
    return f"{host}:{port}" if host and port else host
