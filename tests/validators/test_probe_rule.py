"""The v3 probe rule: a share of failures over enough attempts, judged by the rules a bundle was sealed under."""

from __future__ import annotations

from collections.abc import Callable

from faultkit.observe.probing import PROBE_MIN_ATTEMPTS, probe_period, shortest_window
from faultkit.observe.window import ProbeAttempt, Window
from faultkit.validators.judge import judge
from faultkit.validators.probe_rule import FAIL_SHARE
from tests.validators.windows import HEALTHY, MESSAGE, SPAN_S, inputs, log, window

PERIOD = 1.0  # 60 attempts a one-minute window, 45 of them past the settling quarter
# the workload's 5xx: the probe's own 60 failed attempts are taken off them, and 120 remain past the screen
FAILING = {"frontend": (100.0, 130.0), "cart": (40.0, 130.0)}


def attempts(t0: float, fails: Callable[[int], bool], period: float = PERIOD, span: float = SPAN_S,
             slow: bool = False) -> list[ProbeAttempt]:
    out: list[ProbeAttempt] = []
    for k in range(int(span / period)):
        failed = fails(k)
        a: ProbeAttempt = {"t": round(t0 + k * period, 3), "status": 200 if slow or not failed else 500,
                           "ok": not failed, "ms": 2500 if slow and failed else 5}
        if slow and failed:
            a["slow"] = True
        out.append(a)
    return out


def with_probes(w: Window, fails: Callable[[int], bool], **kw: object) -> Window:
    return {**w, "probe_period_s": PERIOD, "probes": attempts(w["start"], fails, **kw)}


def never(_: int) -> bool:
    return False


def always(_: int) -> bool:
    return True


def every_other(k: int) -> bool:
    return k % 2 == 1


def run(after_fails: Callable[[int], bool], before_fails: Callable[[int], bool] = never,
        recovery_fails: Callable[[int], bool] = never, version: int = 3, slow: bool = False) -> dict:
    data = inputs()
    data["rules_version"] = version
    windows = {
        "before-1": with_probes(window("before-1", HEALTHY, t0=1000), before_fails),
        "after-1": with_probes(window("after-1", FAILING, t0=1100, logs=[log(10, "cart", MESSAGE)]), after_fails,
                               slow=slow),
        "recovery-1": with_probes(window("recovery-1", HEALTHY, t0=1200), recovery_fails),
    }
    return dict(judge_one(data, windows))


def judge_one(data: dict, windows: dict[str, Window]) -> dict:
    """The verdict of one counted cycle over the windows before-1, after-1 and recovery-1."""
    stages = {"stages": [], "aborted": None, "current": None,
              "cycles": [{"index": 1, "counted": True, "before": "before-1", "inject": {"ok": True}, "after": "after-1",
                          "revert": {"ok": True}, "recovery": "recovery-1"}]}
    return dict(judge(data, stages, windows))


def rule(verdict: dict, name: str) -> dict:
    return next(r for r in verdict["rules"] if r["rule"] == name)


def test_a_probe_failing_every_attempt_is_admitted():
    verdict = run(always)
    assert verdict["status"] == "admitted", verdict["summary"]
    assert rule(verdict, "probe-detects-fault")["measured"] == "45/45 failed (100%)"


def test_a_probe_failing_every_other_attempt_is_rejected():
    verdict = run(every_other)
    assert verdict["status"] == "rejected"
    assert verdict["failed_rules"] == ["probe-detects-fault"]
    measured = rule(verdict, "probe-detects-fault")["measured"]
    assert measured.startswith("22/45 failed") or measured.startswith("23/45 failed"), measured


def test_the_same_records_under_v2_admit_the_intermittent_probe():
    """Why the rules are versioned: the shipped bundles' rule (one failure detects) would admit it."""
    data = run(every_other, version=2)
    assert rule(data, "probe-detects-fault")["passed"]


def test_settling_time_is_not_judged():
    # the symptom builds up over the first quarter of the window: not held against the fault
    verdict = run(lambda k: k >= 14)
    assert rule(verdict, "probe-detects-fault")["passed"], rule(verdict, "probe-detects-fault")
    late = run(lambda k: k >= 20)  # still passing well past settling: 5 of 45 passed, 89% < 90%
    assert not rule(late, "probe-detects-fault")["passed"]
    assert FAIL_SHARE == 0.9


def test_too_few_attempts_cannot_admit():
    data = inputs()
    data["rules_version"] = 3
    n = PROBE_MIN_ATTEMPTS - 1
    period = SPAN_S * 0.75 / n
    after = window("after-1", FAILING, t0=1100, logs=[log(10, "cart", MESSAGE)])
    after = {**after, "probes": attempts(1100 + SPAN_S * 0.25 + 0.01, always, period=period, span=SPAN_S * 0.75)}
    windows = {"before-1": with_probes(window("before-1", HEALTHY, t0=1000), never), "after-1": after,
               "recovery-1": with_probes(window("recovery-1", HEALTHY, t0=1200), never)}
    r = rule(judge_one(data, windows), "probe-detects-fault")
    assert not r["passed"] and r["measured"] == f"{n}/{n} failed (100%)" and "too few attempts" in r["detail"]


def test_the_probe_must_be_healthy_before_and_late_in_recovery():
    before = run(always, before_fails=lambda k: k % 10 == 0)  # 10% failing before: the symptom is already there
    assert "probe-healthy-before" in before["failed_rules"]
    # one timeout in a window of 60 is a shared machine, not a symptom
    assert "probe-healthy-before" not in run(always, before_fails=lambda k: k == 3)["failed_rules"]
    early = run(always, recovery_fails=lambda k: k < 25)  # still failing early in recovery: allowed
    assert early["status"] == "admitted", early["summary"]
    late = run(always, recovery_fails=lambda k: k in (40, 45, 50, 55))  # 4 of 30 late: not healthy
    assert "recovery-probe-healthy" in late["failed_rules"]


def test_slow_attempts_with_the_expected_status_detect():
    verdict = run(always, slow=True)
    assert verdict["status"] == "admitted", verdict["summary"]
    assert "45 too slow" in rule(verdict, "probe-detects-fault")["detail"]


def test_the_rate_is_sized_by_the_window():
    assert probe_period(300, 2) == 2.0  # long windows: one attempt per sample interval, 112 judged
    assert probe_period(10, 2) == 0.3  # 25 judged attempts
    assert probe_period(5, 1) == 0.2  # the floor: 18 judged, too few (shortest_window says why)
    assert shortest_window(2) == 6
    for window_s in (6, 8, 10, 20, 60, 300):
        assert window_s * 0.75 / probe_period(window_s, 2) >= PROBE_MIN_ATTEMPTS


def test_only_the_probes_server_errors_come_off_the_workloads_count() -> None:
    """A 400 or a slow 200 is no server error the app counted: taking them off the 5xx screen (up to
    40 attempts a window under v3) would hide the workload's errors."""
    from faultkit.validators.screening import error_rate, probe_server_errors

    after = window("after-1", FAILING, t0=1100)
    as_400: Window = {**after, "probes": [{"t": 1100.0 + k, "status": 400, "ok": False, "ms": 5} for k in range(60)]}
    as_500: Window = {**after, "probes": [{"t": 1100.0 + k, "status": 500, "ok": False, "ms": 5} for k in range(60)]}
    unanswered: Window = {**after, "probes": [{"t": 1100.0 + k, "status": None, "ok": False, "ms": 3000}
                                              for k in range(60)]}
    assert probe_server_errors(as_400) == 0 and error_rate(as_400, ("frontend", "cart")) == error_rate(after, (
        "frontend", "cart"))
    assert probe_server_errors(as_500) == probe_server_errors(unanswered) == 60
    assert error_rate(as_500, ("frontend", "cart"))[0] < error_rate(after, ("frontend", "cart"))[0]


def test_timing_out_attempts_back_to_back_stand_for_the_count():
    """One attempt at a time: a probe timing out at 3 s makes few attempts, and failures covering the
    judged time detect; the same few attempts, fast and spread out, do not; nor do failures covering
    a window too short to hold the count at the probe's period."""
    data = inputs()
    data["rules_version"] = 3
    judged_s = SPAN_S * 0.75
    n = int(judged_s // 3)
    after = window("after-1", FAILING, t0=1100, logs=[log(10, "cart", MESSAGE)])
    start = 1100 + SPAN_S * 0.25 + 0.01

    def verdict(ms: int, period: float = judged_s / 25) -> dict:
        probes: list[ProbeAttempt] = [{"t": round(start + 3 * k, 3), "status": None, "ok": False, "ms": ms}
                                      for k in range(n)]
        windows = {"before-1": with_probes(window("before-1", HEALTHY, t0=1000), never),
                   "after-1": {**after, "probes": probes, "probe_period_s": period},
                   "recovery-1": with_probes(window("recovery-1", HEALTHY, t0=1200), never)}
        return rule(judge_one(data, windows), "probe-detects-fault")

    assert n < PROBE_MIN_ATTEMPTS
    assert verdict(3000)["passed"]
    assert not verdict(5)["passed"]
    short = verdict(3000, period=judged_s / (PROBE_MIN_ATTEMPTS - 1))  # room for 19 attempts: too short
    assert not short["passed"] and "too few attempts" in short["detail"]


def test_failing_attempts_run_back_to_back_cover_the_time_between_them():
    """The cluster's 8 s windows: checkouts of 0.1 to 0.4 s at a 0.24 s period make fewer than 20
    attempts, quick ones waiting out the period and slow ones starting the next at once. Each covers
    until the next starts, so a probe failing throughout detects; two passing attempts do not."""
    data = inputs()
    data["rules_version"] = 3
    period = SPAN_S * 0.75 / 25  # the prober's period for this window: 25 judged attempts
    t, probes = 1100 + SPAN_S * 0.25 + 0.01, []
    while t < 1100 + SPAN_S:
        ms = 1000 if len(probes) % 2 else 3200  # a quick one, then one longer than the period
        probes.append({"t": round(t, 3), "status": 500, "ok": False, "ms": ms})
        t += max(ms / 1000, period) + 0.02
    assert len(probes) < PROBE_MIN_ATTEMPTS
    after = {**window("after-1", FAILING, t0=1100, logs=[log(10, "cart", MESSAGE)]), "probe_period_s": period}

    def verdict(attempts: list[ProbeAttempt]) -> dict:
        windows = {"before-1": with_probes(window("before-1", HEALTHY, t0=1000), never),
                   "after-1": {**after, "probes": attempts},
                   "recovery-1": with_probes(window("recovery-1", HEALTHY, t0=1200), never)}
        return rule(judge_one(data, windows), "probe-detects-fault")

    assert verdict(probes)["passed"], verdict(probes)
    assert "failures cover 100%" in verdict(probes)["detail"]  # by their run time alone: 84%
    two_pass = [{**a, "status": 200, "ok": True} if k in (6, 12) else a for k, a in enumerate(probes)]
    assert not verdict(two_pass)["passed"]


def test_the_prober_never_has_two_attempts_in_flight():
    import threading
    import time

    from faultkit.observe.probing import SymptomProber

    in_flight, most = 0, 0
    lock = threading.Lock()

    def slow_attempt() -> dict:
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        time.sleep(0.3)
        with lock:
            in_flight -= 1
        return {"status": 200, "ok": True, "ms": 300}

    prober = SymptomProber(slow_attempt, period=0.05, timeout_s=1.0)
    prober.start(time.time())
    time.sleep(1.0)
    attempts = prober.stop()
    assert most == 1 and 3 <= len(attempts) <= 5
    assert all(b["t"] - a["t"] >= 0.29 for a, b in zip(attempts, attempts[1:], strict=False))
