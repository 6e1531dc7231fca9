"""The symptom probe on its own clock: attempts at a rate sized by the window (rules v3).

Four probes a window (rules v2) caught an intermittent symptom by luck. The probe rule now asks
for a share of failures over at least PROBE_MIN_ATTEMPTS attempts in the judged part of the after
window (past its first SETTLE_FRACTION), so the period is chosen to reach that count with a
margin, never faster than MIN_PERIOD_S (the probe is extra traffic on the app; its requests are
taken off the counted traffic by the screens) and never slower than the sampling interval.

Attempts start on schedule whether or not the previous one answered (a probe timing out must not
thin the count); each records when it started, its status, and its round-trip time.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from faultkit.observe.window import ProbeAttempt, ProbeResult

PROBE_MIN_ATTEMPTS = 20  # judged attempts an after window needs before a share of failures means anything
SETTLE_FRACTION = 0.25  # the after window's first quarter is settling time, not judged
MIN_PERIOD_S = 0.2  # at most 5 attempts a second: the workload is 10 requests a second
MARGIN = 1.25  # aim past the minimum, so a late attempt or two does not drop the count below it


def probe_period(window_s: float, interval_s: float) -> float:
    """Seconds between attempts for a window of this length."""
    judged = window_s * (1 - SETTLE_FRACTION)
    return round(min(interval_s, max(MIN_PERIOD_S, judged / (PROBE_MIN_ATTEMPTS * MARGIN))), 3)


def shortest_window(interval_s: float) -> float:
    """The shortest window whose judged part holds PROBE_MIN_ATTEMPTS attempts at the fastest rate."""
    return math.ceil(PROBE_MIN_ATTEMPTS * min(interval_s, MIN_PERIOD_S) / (1 - SETTLE_FRACTION))


class SymptomProber:
    """Runs `attempt` every `period` seconds between start() and stop(); stop() returns every attempt."""

    def __init__(self, attempt: Callable[[], ProbeResult], period: float, timeout_s: float) -> None:
        self.attempt, self.period = attempt, period
        # enough threads for every attempt that can be in flight while one times out
        self.pool = ThreadPoolExecutor(max_workers=max(2, math.ceil(timeout_s / period) + 2))
        self.futures: list[tuple[float, Future[ProbeResult]]] = []
        self.halt = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self, at: float) -> None:
        self.halt.clear()
        self.futures = []
        self.thread = threading.Thread(target=self._loop, args=(at,), daemon=True, name="symptom-probe")
        self.thread.start()

    def _loop(self, at: float) -> None:
        next_at = at
        while not self.halt.is_set():
            self.futures.append((round(time.time(), 3), self.pool.submit(self.attempt)))
            next_at = max(next_at + self.period, time.time())  # an overrun skips ticks, never bunches them
            self.halt.wait(max(0.0, next_at - time.time()))

    def stop(self) -> list[ProbeAttempt]:
        """Stop starting attempts and wait for those in flight (each bounded by the probe's timeout)."""
        self.halt.set()
        if self.thread:
            self.thread.join()
        out: list[ProbeAttempt] = []
        for t, future in self.futures:
            result = future.result()
            attempt: ProbeAttempt = {"t": t, "status": result["status"], "ok": result["ok"], "ms": result["ms"]}
            if "error" in result:
                attempt["error"] = result["error"]
            if result.get("slow"):
                attempt["slow"] = True
            out.append(attempt)
        return out

    def close(self) -> None:
        self.halt.set()
        self.pool.shutdown(wait=False, cancel_futures=True)
