"""The symptom probe on its own clock: attempts at a rate sized by the window (rules v3).

Four probes a window (rules v2) caught an intermittent symptom by luck. The probe rule now asks
for a share of failures over at least PROBE_MIN_ATTEMPTS attempts in the judged part of the after
window (past its first SETTLE_FRACTION), so the period is chosen to reach that count with a
margin, never faster than MIN_PERIOD_S (the probe is extra traffic on the app; its requests are
taken off the counted traffic by the screens) and never slower than the sampling interval.

Attempts run one at a time, as a user's would: a probe with setup steps is stateful (it fills the
probe user's cart, then checks out), and two attempts in flight at once race each other into
failures with the app at rest (seen on a cluster, where an attempt takes longer than the period).
A slow or timing-out attempt therefore delays the next; the probe rule counts such back-to-back
failing attempts by the time they cover (validators/probe_rule.py). Each attempt records when it
started, its status, and its round-trip time.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from faultkit.observe.window import ProbeAttempt, ProbeResult

# W3C baggage on every probe request: an OpenTelemetry-instrumented app copies it onto its spans
# (and sends it on to its dependencies), so a collector can drop the probe's traffic from what the
# agent under test sees and count it apart
PROBE_BAGGAGE = {"baggage": "faultkit.origin=probe"}
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
    """Runs `attempt` every `period` seconds (or back to back, when one takes longer) between start()
    and stop(); stop() returns every attempt."""

    def __init__(self, attempt: Callable[[], ProbeResult], period: float, timeout_s: float) -> None:
        self.attempt, self.period, self.timeout_s = attempt, period, timeout_s
        self.results: list[tuple[float, ProbeResult]] = []
        self.halt = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self, at: float) -> None:
        self.halt.clear()
        self.results = []
        self.thread = threading.Thread(target=self._loop, args=(at,), daemon=True, name="symptom-probe")
        self.thread.start()

    def _loop(self, at: float) -> None:
        next_at = at
        while not self.halt.is_set():
            started = round(time.time(), 3)
            self.results.append((started, self.attempt()))
            next_at = max(next_at + self.period, time.time())  # an overrun skips ticks, never bunches them
            self.halt.wait(max(0.0, next_at - time.time()))

    def stop(self) -> list[ProbeAttempt]:
        """Stop starting attempts and wait for the one in flight (bounded by the probe's timeouts)."""
        self.halt.set()
        if self.thread:
            self.thread.join()
        out: list[ProbeAttempt] = []
        for t, result in self.results:
            attempt: ProbeAttempt = {"t": t, "status": result["status"], "ok": result["ok"], "ms": result["ms"]}
            if "error" in result:
                attempt["error"] = result["error"]
            if result.get("slow"):
                attempt["slow"] = True
            if "page" in result:
                attempt["page"] = result["page"]
            if "statuses" in result:
                attempt["statuses"] = result["statuses"]
            out.append(attempt)
        return out

    def close(self) -> None:
        self.halt.set()
