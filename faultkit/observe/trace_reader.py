"""Each window's spans, read from Jaeger once they have had time to arrive (issue 31).

A span reaches Jaeger seconds after it ends: the SDK's batch processor holds it up to its schedule
delay, the collector's batch processor a little more. So a window's spans are read LAG_S after the
window's end, in the background: the validation goes on (inject, the next window) meanwhile, and
waits only for the last window's read. A Jaeger that does not answer gives the window a one-line
error instead of a summary; it never stops a validation.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from faultkit.observe.jaeger import JaegerError, Span, read_spans
from faultkit.observe.trace_window import TraceError, TraceSummary, summarize

LAG_S = 5.0  # the SDK's default schedule delay (5 s) covers the collector's batch timeout too
Reader = Callable[[str, tuple[str, ...], float, float, dict[str, str]], list[Span]]
Traces = TraceSummary | TraceError
UNREAD = "the validation ended before this window's spans were read"


class TraceWindows:
    """Reads the spans of each window handed to `start`; `take` collects the summaries."""

    def __init__(self, url: str, services: Sequence[str], scope: Mapping[str, str] | None = None,
                 lag_s: float = LAG_S, read: Reader = read_spans, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.services = tuple(services)
        self.scope = dict(scope or {})  # the instance's resource attributes: another instance's traces are not read
        self.lag_s = lag_s
        self.read = read
        self.clock = clock
        self.closing = threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="faultkit-traces")
        self.reads: dict[str, Future[Traces]] = {}

    def start(self, name: str, start: float, end: float) -> None:
        """Read window `name`'s spans (from `start` to `end`, epoch seconds) once they are in."""
        self.reads[name] = self.pool.submit(self._summary, start, end)

    def take(self, wait: bool) -> dict[str, Traces]:
        """The summaries read so far (with `wait`, every one started), each handed out once."""
        out: dict[str, Traces] = {}
        for name, future in list(self.reads.items()):
            if wait or future.done():
                out[name] = future.result()
                del self.reads[name]
        return out

    def abandon(self) -> dict[str, Traces]:
        """Every window started, without waiting: those whose spans are not read yet say so."""
        self.closing.set()  # a read still waiting for its spans to arrive gives up
        out: dict[str, Traces] = {name: f.result() if f.done() and not f.cancelled() else {"error": UNREAD}
                                  for name, f in self.reads.items()}
        self.reads.clear()
        return out

    def close(self) -> None:
        self.closing.set()
        self.pool.shutdown(wait=False, cancel_futures=True)

    def _summary(self, start: float, end: float) -> Traces:
        if self.closing.wait(max(0.0, end + self.lag_s - self.clock())):
            return {"error": UNREAD}
        try:
            spans = self.read(self.url, self.services, start, end, self.scope)
        except JaegerError as e:
            return {"error": str(e)}
        except (ValueError, TypeError, AttributeError, KeyError) as e:  # an answer not shaped like Jaeger's
            return {"error": f"Jaeger at {self.url} answered with spans that could not be read ({type(e).__name__})"}
        summary = summarize(spans, self.services)
        if self.scope:
            summary["scope"] = dict(self.scope)
        return summary
