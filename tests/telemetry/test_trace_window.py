"""A window's spans summed up (trace_window.py) and read once they are in (trace_reader.py): on
Span objects and an injected reader, no Jaeger; the one read over a socket goes to a closed port."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Sequence

from faultkit.bundles import dumps
from faultkit.observe.jaeger import JaegerError, Span
from faultkit.observe.trace_reader import UNREAD, TraceWindows
from faultkit.observe.trace_window import TOP_PATHS, summarize

SERVICES = ("frontend", "recommendation", "productcatalog")


def span(trace: str, sid: str, parent: str, service: str, operation: str, kind: str = "server", ms: float = 1.0,
         error: bool = False, start: int = 0) -> Span:
    return Span(trace_id=trace, span_id=sid, parent_id=parent, service=service, operation=operation, kind=kind,
                start_us=start, duration_us=int(ms * 1000), error=error, peer="")


def product_page(trace: str, recommendation_down: bool = False, ms: float = 10.0) -> list[Span]:
    """loadgenerator -> frontend -> productcatalog and recommendation, as minishop's product page."""
    spans = [span(trace, "1", "", "loadgenerator", "GET", "client", ms=ms + 2, error=recommendation_down),
             span(trace, "2", "1", "frontend", "GET /product/{id}", ms=ms + 1, error=recommendation_down, start=1),
             span(trace, "3", "2", "frontend", "GET", "client", ms=2, start=2),
             span(trace, "4", "3", "productcatalog", "GET /products/{id}", ms=1, start=3),
             span(trace, "5", "2", "frontend", "GET", "client", ms=ms / 2, error=recommendation_down, start=4)]
    if not recommendation_down:  # a refused connection leaves no span in recommendation
        spans.append(span(trace, "6", "5", "recommendation", "GET /recommendations", ms=ms / 4, start=5))
    return spans


def test_a_healthy_window_has_operations_and_calls_and_no_failing_path():
    spans = [s for i in range(4) for s in product_page(f"t{i}", ms=10.0 * (i + 1))]
    summary = summarize(spans, SERVICES)
    assert (summary["traces"], summary["spans"], summary["error_spans"], summary["failing_traces"]) == (4, 20, 0, 0)
    assert summary["failing"] == []
    # the load generator's spans are not the app's: left out of the figures, though they start the calls
    assert [(o["service"], o["operation"], o["kind"], o["spans"]) for o in summary["operations"]] == [
        ("frontend", "GET", "client", 8), ("frontend", "GET /product/{id}", "server", 4),
        ("productcatalog", "GET /products/{id}", "server", 4), ("recommendation", "GET /recommendations", "server", 4)]
    page = summary["operations"][1]
    assert (page["p50_ms"], page["p95_ms"], page["max_ms"], page["errors"]) == (21.0, 41.0, 41.0, 0)
    assert summary["calls"] == [
        {"caller": "frontend", "callee": "productcatalog", "calls": 4, "errors": 0},
        {"caller": "frontend", "callee": "recommendation", "calls": 4, "errors": 0},
        {"caller": "loadgenerator", "callee": "frontend", "calls": 4, "errors": 0}]


def test_a_service_read_up_to_jaegers_limit_is_named_as_limited():
    spans = [s for i in range(3) for s in product_page(f"t{i}")]
    # every page touches frontend, productcatalog and recommendation: three traces each
    assert summarize(spans, SERVICES, limit=3)["limited"] == ["frontend", "productcatalog", "recommendation"]
    assert "limited" not in summarize(spans, SERVICES, limit=4)  # under the limit: the bytes are as before
    # a page without recommendation's span leaves that service one trace under the limit
    spans += product_page("t3", recommendation_down=True)
    assert summarize(spans, SERVICES, limit=4)["limited"] == ["frontend", "productcatalog"]


def test_a_failing_path_runs_from_the_root_to_the_deepest_failed_span():
    spans = [*product_page("a", recommendation_down=True), *product_page("b", recommendation_down=True),
             *product_page("c")]
    summary = summarize(spans, SERVICES)
    assert summary["failing"] == [{"path": ["loadgenerator GET", "frontend GET /product/{id}", "frontend GET"],
                                   "traces": 2}]
    assert (summary["failing_traces"], summary["error_spans"]) == (2, 4)
    client = next(o for o in summary["operations"] if o["kind"] == "client")
    assert (client["spans"], client["errors"]) == (6, 2)
    assert {"caller": "loadgenerator", "callee": "frontend", "calls": 3, "errors": 2} in summary["calls"]


def test_equally_deep_failures_give_the_earliest_and_a_missing_parent_ends_the_path():
    spans = [span("t", "1", "gone", "frontend", "GET /cart", error=True, start=1),
             span("t", "2", "1", "cart", "GET /cart", error=True, start=3),
             span("t", "3", "1", "checkout", "POST /checkout", error=True, start=2)]
    summary = summarize(spans, ("frontend", "cart", "checkout"))
    assert summary["failing"] == [{"path": ["frontend GET /cart", "checkout POST /checkout"], "traces": 1}]


def test_only_the_most_frequent_paths_are_kept_in_a_fixed_order():
    spans = [span(f"t{i}-{k}", "1", "", "frontend", f"GET /page/{i}", error=True)
             for i in range(TOP_PATHS + 3) for k in range(1 + i % 3)]
    failing = summarize(spans, ("frontend",))["failing"]
    assert len(failing) == TOP_PATHS
    assert [f["traces"] for f in failing] == sorted((f["traces"] for f in failing), reverse=True)
    assert failing[0] == {"path": ["frontend GET /page/11"], "traces": 3}  # ties by path: /page/11 < /page/2


def test_the_same_spans_give_the_same_bytes_in_any_order():
    spans = [s for i in range(5) for s in product_page(f"t{i}", recommendation_down=i % 2 == 0, ms=3.3333 * i + 1)]
    first = dumps(summarize(spans, SERVICES))
    assert dumps(summarize(reversed(spans), SERVICES)) == first
    figures = [o[k] for o in json.loads(first)["operations"] for k in ("p50_ms", "p95_ms", "max_ms")]
    assert all(round(f, 3) == f for f in figures)


def test_an_empty_window_is_all_zeros():
    assert summarize([], SERVICES) == {"traces": 0, "spans": 0, "error_spans": 0, "failing_traces": 0,
                                       "operations": [], "calls": [], "failing": []}


class Reads:
    """An injected reader: records when each read came, answers with spans or raises."""

    def __init__(self, answer: list[Span] | JaegerError) -> None:
        self.answer = answer
        self.calls: list[tuple[float, float, float]] = []
        self.scopes: list[dict[str, str]] = []

    def __call__(self, url: str, services: Sequence[str], start: float, end: float,
                 scope: dict[str, str]) -> list[Span]:
        self.calls.append((time.time(), start, end))
        self.scopes.append(scope)
        if isinstance(self.answer, JaegerError):
            raise self.answer
        return self.answer


def test_a_window_is_read_after_its_lag_in_the_background():
    reads = Reads(product_page("t"))
    windows = TraceWindows("http://jaeger", SERVICES, lag_s=0.3, read=reads)
    end = time.time()
    started = time.monotonic()
    windows.start("before-1", end - 1, end)
    assert time.monotonic() - started < 0.1  # handing a window over does not wait
    assert windows.take(wait=False) == {}
    taken = windows.take(wait=True)
    assert taken["before-1"]["traces"] == 1  # type: ignore[typeddict-item]
    read_at, start, until = reads.calls[0]
    assert read_at >= end + 0.3 and (start, until) == (end - 1, end)
    assert reads.scopes == [{}]  # no scope given: every instance's traces
    assert windows.take(wait=True) == {}  # each summary is handed out once
    windows.close()


def test_a_scoped_window_reads_its_instance_only():
    reads = Reads(product_page("t"))
    windows = TraceWindows("http://jaeger", SERVICES, {"k8s.namespace.name": "shop-1"}, lag_s=0, read=reads)
    windows.start("after-1", 0, 0)
    windows.take(wait=True)
    assert reads.scopes == [{"k8s.namespace.name": "shop-1"}]
    windows.close()


def test_a_jaeger_that_does_not_answer_is_a_one_line_error():
    windows = TraceWindows("http://jaeger", SERVICES, lag_s=0, read=Reads(JaegerError("Jaeger at x did not answer")))
    windows.start("after-1", 0, 0)
    assert windows.take(wait=True) == {"after-1": {"error": "Jaeger at x did not answer"}}
    windows.close()


def test_a_closed_port_is_recorded_not_raised():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    windows = TraceWindows(url, SERVICES, lag_s=0)
    windows.start("after-1", time.time() - 1, time.time())
    error = windows.take(wait=True)["after-1"]
    assert error == {"error": f"Jaeger at {url} did not answer /api/services (ConnectionError)"}
    windows.close()


def test_an_answer_not_shaped_like_jaegers_is_recorded():
    def bad(url: str, services: Sequence[str], start: float, end: float, scope: dict[str, str]) -> list[Span]:
        raise TypeError("'NoneType' object is not iterable")

    windows = TraceWindows("http://jaeger", SERVICES, lag_s=0, read=bad)
    windows.start("after-1", 0, 0)
    assert windows.take(wait=True)["after-1"] == {
        "error": "Jaeger at http://jaeger answered with spans that could not be read (TypeError)"}
    windows.close()


def test_abandoning_records_the_reads_still_waiting_and_stops_them():
    reads = Reads([])
    windows = TraceWindows("http://jaeger", SERVICES, lag_s=60, read=reads)
    windows.start("recovery-1", time.time(), time.time())
    started = time.monotonic()
    assert windows.abandon() == {"recovery-1": {"error": UNREAD}}
    windows.close()
    while any(t.name.startswith("faultkit-traces") for t in threading.enumerate()):
        time.sleep(0.01)
    assert time.monotonic() - started < 2 and reads.calls == []
