"""Sample a running application for one observation window.

Each sample holds, per instance, its build, readiness, restart and OOM counts and its cumulative
request counters by status. The symptom probe runs beside the samples on its own clock (probing.py),
every attempt recorded in the window's `probes`. At the end, the window's log records
(warnings and errors, and any line with the fault's message) are read from the platform. Since
rules v5 the window also records where each figure was read (`sources`: the platform's
`signal_sources()`: the request counts' endpoint or query, the logs' source and format). Given a
Jaeger (`traces`), each window's spans are read in the background once they have arrived
(trace_reader.py); whoever writes the window attaches their summary. Given a Prometheus that evaluates
the app's alert pack (`alerts`), it is asked beside each sample for the alerts pending or firing, and
the window records each once (alerts.py). The window is raw data: every rate and rule is computed
later from it (validators/screening.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import requests

from faultkit.catalog.model import Probe, thaw
from faultkit.observe.alerts import TIMEOUT_S as ALERTS_TIMEOUT_S
from faultkit.observe.alerts import AlertWatch
from faultkit.observe.load import LoadMeter, MachineWindow
from faultkit.observe.probing import PROBE_BAGGAGE, SymptomProber, probe_period
from faultkit.observe.trace_reader import TraceWindows
from faultkit.observe.window import InstanceSample, LogLine, ProbeResult, Sample, Window
from faultkit.platforms.base import Platform

Tick = Callable[[str, float], None]  # (window name, seconds left) for the live view


@dataclass(frozen=True)
class WindowSpec:
    name: str  # "before-1", "after-1", "recovery-1", ...
    seconds: float
    interval: float


def page_problem(text: str, expect: tuple[str, ...], errors: tuple[str, ...]) -> str | None:
    """Why a page served with the expected status failed its user: a text it must show is missing,
    or it shows an error text. None when it did not."""
    missing = next((e for e in expect if e not in text), None)
    if missing is not None:
        return f"no {missing!r}"
    shown = next((e for e in errors if e in text), None)
    return f"shows {shown!r}" if shown else None


class Sampler:
    def __init__(self, platform: Platform, services: tuple[str, ...], probe: Probe | None,
                 log_message: str | None = None, continuous_probe: bool = True, record_sources: bool = False,
                 traces: TraceWindows | None = None, alerts: AlertWatch | None = None) -> None:
        self.platform = platform
        self.traces = traces  # each window's spans, read once they are in Jaeger (None: no Jaeger given)
        self.alerts = alerts  # the alerts an agent would see, polled with each sample (None: none given)
        # rules v5: each window says which source measured its figures (older windows keep their bytes)
        self.record_sources = record_sources
        # rules v3: the probe on its own clock (probing.py); v2: one probe with each sample
        self.continuous_probe = continuous_probe
        self.services = services
        self.probe = probe
        self.log_message = (log_message or "").lower()
        self.session = requests.Session()
        self.session.headers.update(PROBE_BAGGAGE)  # only the probe sends through this session
        # attempts overlap while one waits out a slow answer: one pooled connection for each
        self.session.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=64))
        self.pool = ThreadPoolExecutor(max_workers=8)
        # the machine around each window, by window name: kept beside the window, never in it, so a
        # window file keeps the bytes every shipped bundle has
        self.meter = LoadMeter()
        self.machine: dict[str, MachineWindow] = {}
        self.probers: dict[float, SymptomProber] = {}  # by period: one pool per rate, reused across windows
        self.signed_in = False  # setup_when after-failure: the last attempt passed, so its session holds

    def close(self) -> None:
        if self.traces:
            self.traces.close()
        for prober in self.probers.values():
            prober.close()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.session.close()

    def window(self, spec: WindowSpec, tick: Tick | None = None, lead: Sample | None = None) -> Window:
        """Samples every interval for the window's length. `lead`, a sample taken just before a
        change, opens the window at that moment, so what the change does at once (a kill and its
        restart, the log lines it causes) falls inside it rather than before its first sample."""
        samples: list[Sample] = [lead] if lead else []
        start = lead["t"] if lead else time.time()
        end = start + spec.seconds
        next_at = start + spec.interval if lead else start
        period = probe_period(spec.seconds, spec.interval)
        prober = self._prober(period) if self.probe and self.continuous_probe else None
        if prober:
            prober.start(start)
        polls: list[Future[None]] = []
        if self.alerts:
            self.alerts.take()  # nothing from before this window (a window cut short) counts in it
        self.meter.start()
        while True:
            samples.append(self.sample(probe=not self.continuous_probe))
            if self.alerts:
                polls.append(self.pool.submit(self.alerts.poll, samples[-1]["t"]))
            now = time.time()
            if now >= end - 0.05:
                break
            if tick:
                tick(spec.name, end - now)
            # a slow sample does not stretch the window: skip the ticks it overran, end on time
            next_at = min(end, max(next_at + spec.interval, now))
            time.sleep(max(0.0, next_at - now))
            # how late the sampler woke against its schedule: the machine's doing, not the app's (a
            # slow sample, say a scrape of a frozen service, moves the schedule instead)
            self.meter.late(time.time() - next_at)
        finished = time.time()
        self.meter.spanned(spec.seconds, start, samples[-1]["t"])
        attempts = prober.stop() if prober else []
        self.machine[spec.name] = self.meter.stop()
        if self.traces:
            self.traces.start(spec.name, start, finished)
        window: Window = {"name": spec.name, "start": start, "end": finished, "window_s": spec.seconds,
                          "interval_s": spec.interval, "samples": samples, "logs": self.logs(start, finished)}
        if prober:
            window["probe_period_s"] = period
            window["probes"] = attempts
        if self.record_sources:
            window["sources"] = {k: dict(v) for k, v in self.platform.signal_sources().items()}
        if self.alerts:
            wait(polls, timeout=ALERTS_TIMEOUT_S + 1)
            window["alerts"] = self.alerts.take()
        return window

    def _prober(self, period: float) -> SymptomProber:
        assert self.probe is not None
        if period not in self.probers:
            self.probers[period] = SymptomProber(self.run_probe, period, self.probe.timeout_s)
        return self.probers[period]

    def sample(self, probe: bool = True) -> Sample:
        t = time.time()
        instances = {i.id: i for i in self.platform.instances()}
        # the platform chooses how to count (a direct scrape locally, the API server's pod proxy on a cluster)
        counting = [self.pool.submit(self.platform.request_counts, service) for service in self.services]
        probing = self.pool.submit(self.run_probe) if self.probe and probe else None
        counts: dict[str, dict[str, float] | None] = {}
        for future in counting:
            counts.update(future.result())
        out: dict[str, InstanceSample] = {
            iid: {"service": inst.service, "build": inst.build, "ready": inst.ready, "restarts": inst.restarts,
                  "oom_kills": inst.oom_kills, "requests": counts.get(iid)}
            for iid, inst in sorted(instances.items())
            if inst.service in self.services
        }
        return {"t": round(t, 3), "instances": out, "probe": probing.result() if probing else None}

    def run_probe(self) -> ProbeResult:
        assert self.probe is not None
        p = self.probe
        base = self.platform.endpoint(p.service)
        started = time.monotonic()
        error: str | None = None
        statuses: list[int | None] = []  # the attempt's requests as they were answered, redirects included

        def send(step: Any) -> requests.Response:
            statuses.append(None)  # sent; no answer unless one comes
            answer = self.session.request(step.get("method", "GET"), base + step["path"],
                                          json=thaw(step.get("body")), data=thaw(step.get("form")),
                                          timeout=p.timeout_s)
            statuses[-1:] = [r.status_code for r in (*answer.history, answer)]
            return answer

        status: int | None = None
        shown: str | None = None  # why an answer with the expected status still failed the user
        try:
            if p.setup_when == "each" or not self.signed_in:
                for step in p.setup:
                    send(step)
            answer = send({"method": p.method, "path": p.path, "body": p.body, "form": p.form})
            status = answer.status_code
            if status == p.expect_status:
                shown = page_problem(answer.text, p.expect_text, p.error_text)
        except requests.RequestException as e:
            error = type(e).__name__
        ms = round((time.monotonic() - started) * 1000)
        # a bound on the round trip makes slowness a symptom: the right status, too late, is a failure
        slow = status == p.expect_status and p.expect_latency_ms is not None and ms > p.expect_latency_ms
        result: ProbeResult = {"status": status, "ok": status == p.expect_status and not slow and not shown,
                               "ms": ms, "statuses": statuses}
        self.signed_in = result["ok"]
        if error:
            result["error"] = error
        if slow:
            result["slow"] = True
        if shown:
            result["page"] = shown
        return result

    def logs(self, since: float, until: float) -> list[LogLine]:
        out: list[LogLine] = []
        for service in self.services:
            for r in self.platform.logs(service, since, until):
                wanted = r.level in ("ERROR", "CRITICAL", "FATAL", "WARNING")
                if wanted or (self.log_message and self.log_message in r.message.lower()):
                    out.append({"ts": round(r.ts, 3), "service": r.service, "instance": r.instance,
                                "level": r.level, "message": r.message[:500]})
        return sorted(out, key=lambda r: (r["ts"], r["service"], r["message"]))
