"""`apps observe`'s work: watch a running application for a while, then read the call graph its traces
show from Jaeger and hold it against the descriptor (issue 31).

Nothing is started here: the app runs, under its load, on whatever platform the user brought it up
on, and exports spans to the Jaeger given. The period's spans are read once it has passed and a
flush delay more, so that spans still queued in the services' batch processors and the collector
are in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlparse

from faultkit.apps.descriptor import AppDescriptor
from faultkit.apps.observed_graph import GraphDiff, RecordedGraph
from faultkit.errors import FaultkitError, UsageError
from faultkit.observe import jaeger
from faultkit.observe.service_graph import ServiceGraph, compare_graph, service_graph

# the OpenTelemetry SDK's batch span processor sends every 5 s by default (OTEL_BSP_SCHEDULE_DELAY)
FLUSH_S = 5.0
T = TypeVar("T")


@dataclass(frozen=True)
class Observation:
    graph: ServiceGraph
    diff: GraphDiff
    recorded: RecordedGraph  # what --write keeps


def jaeger_url(given: str | None, app: AppDescriptor, given_as: str = "--jaeger") -> str:
    """The Jaeger query URL to read: the one given (option or environment), else the descriptor's
    signals.traces.jaeger; checked as an http(s) URL."""
    if given:
        return jaeger.check_url(given, given_as)
    if app.signals.traces.jaeger:
        return jaeger.check_url(app.signals.traces.jaeger, f"{app.name}'s signals.traces.jaeger")
    raise UsageError(f"no Jaeger to read {app.name}'s traces from: give --jaeger URL, set FAULTKIT_JAEGER "
                     f"(tools/telemetry/telemetry env prints it), or write signals.traces.jaeger in its app.yaml")


def observe(url: str, app: AppDescriptor, seconds: float, progress: Callable[[str], None] = lambda _: None,
            sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time,
            scope: Mapping[str, str] | None = None) -> Observation:
    """The graph the app's traces show over the next `seconds`, read from Jaeger at `url`; with a
    `scope` (resource attributes, such as {"k8s.namespace.name": NS}), one instance's traces only."""
    _read(lambda: jaeger.services(url))  # a Jaeger that does not answer fails now, not after the wait
    start = clock()
    progress(f"watching {app.name} for {seconds:g} s (its traces, in Jaeger at {url})")
    sleep(seconds)
    progress(f"waiting {FLUSH_S:g} s for the last spans to be flushed")
    sleep(FLUSH_S)
    progress("reading spans")
    spans = _read(lambda: jaeger.read_spans(url, app.service_names, start, start + seconds, scope))
    graph = service_graph(spans, app)
    recorded = RecordedGraph(app=app.name, observed_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start)),
                             duration_s=seconds, jaeger=_without_credentials(url), edges=graph.edges,
                             services=graph.services, external=graph.external, spans=graph.spans,
                             traces=graph.traces, scope=tuple(sorted((scope or {}).items())))
    return Observation(graph, compare_graph(graph, app), recorded)


def _read(call: Callable[[], T]) -> T:
    try:
        return call()
    except jaeger.JaegerError as e:
        raise FaultkitError(f"{e}; is it running, and is this its query port?") from None


def _without_credentials(url: str) -> str:
    """The URL as recorded in a committed file: no user or password."""
    parsed = urlparse(url)
    if not (parsed.username or parsed.password):
        return url
    return parsed._replace(netloc=parsed.netloc.rpartition("@")[2]).geturl()
