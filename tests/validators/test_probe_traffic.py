"""Rules v4: every request of the symptom probe's own is taken off the traffic the rules count.

The probe passes before the fault and fails after it. Under v3 its answered requests stayed in the
entry service's non-5xx count, so at the short windows of tests (up to 5 attempts a second, two
requests each with a setup step) keeps-serving read the probe's own failing as the app serving
less; and a failing setup step's 5xx stayed in the screen. Bundles sealed under v3 are still judged
as they were.
"""

from __future__ import annotations

from faultkit.observe.window import ProbeAttempt, Window
from faultkit.validators import screening as sc
from faultkit.validators.judge import judge
from tests.validators.windows import MESSAGE, inputs, log, window

ATTEMPTS = 60  # one a second over the one-minute windows, each a setup step and the probe's request


def probed(w: Window, statuses: list[int | None]) -> Window:
    ok = statuses[-1] == 200
    attempts: list[ProbeAttempt] = [{"t": w["start"] + k, "status": statuses[-1], "ok": ok, "ms": 5,
                                     "statuses": list(statuses)} for k in range(ATTEMPTS)]
    return {**w, "probe_period_s": 1.0, "probes": attempts}


def verdict(version: int, after_rates: dict[str, tuple[float, float]],
            sources: dict[str, dict[str, object]] | None = None) -> dict[str, dict]:
    """One cycle: before, the workload's 120 non-5xx a minute at the frontend and the probe's 120
    (60 attempts of two requests); after, as given, with every request of the probe's answered 500.
    `sources`: what each window records measured its counts (rules v5)."""
    data = inputs()
    data["entry"]["probe"] = {"service": "frontend", "method": "GET", "path": "/cart?user=probe"}
    data["rules_version"] = version
    healthy = {"frontend": (240.0, 0.0), "cart": (120.0, 0.0)}
    windows = {
        "before-1": probed(window("before-1", healthy, t0=1000), [200, 200]),
        "after-1": probed(window("after-1", after_rates, t0=1100, logs=[log(10, "cart", MESSAGE)]), [500, 500]),
        "recovery-1": probed(window("recovery-1", healthy, t0=1200), [200, 200]),
    }
    stages = {"stages": [], "cycles": [{"index": 1, "counted": True, "before": "before-1", "after": "after-1",
                                        "recovery": "recovery-1", "inject": {"ok": True}, "revert": {"ok": True}}]}
    if sources is not None:
        windows = {name: {**w, "sources": sources} for name, w in windows.items()}
    out = judge(data, stages, windows)  # type: ignore[arg-type]
    return {r["rule"]: r for r in out["rules"] if r.get("cycle") == 1}


def test_keeps_serving_counts_the_workloads_answers_not_the_probes():
    """The workload keeps 50 of its 120 answers a minute (42%): serving, by the 25% rule. With the
    probe's 120 passing requests in the before rate, v3 asked for 60 and rejected it."""
    after = {"frontend": (50.0, 190.0), "cart": (0.0, 190.0)}
    v3, v4 = verdict(3, after)["keeps-serving"], verdict(4, after)["keeps-serving"]
    assert (v3["passed"], v3["measured"], v3["threshold"]) == (False, 50.0, 60.0)
    assert (v4["passed"], v4["measured"], v4["threshold"]) == (True, 50.0, 30.0)


def test_a_probes_failing_setup_step_no_longer_passes_the_screen_alone():
    """122 5xx a minute at the frontend, 120 of them the probe's (its setup step and its request, 60
    times): 2 are the workload's, under the screen. v3 took one request off per failed attempt and
    passed the screen on the probe's setup steps."""
    after = {"frontend": (120.0, 122.0), "cart": (120.0, 0.0)}
    v3, v4 = verdict(3, after)["screen-server-errors"], verdict(4, after)["screen-server-errors"]
    assert (v3["passed"], v3["measured"]) == (True, 62.0)
    assert (v4["passed"], v4["measured"]) == (False, 2.0)


def test_counts_that_leave_the_probe_out_are_not_reduced_by_its_requests():
    """Read through PromQL, minishop's counts leave the probe's marked requests out (issue 31): the
    12 5xx a minute at the frontend are all the workload's, where taking the probe's 120 failures off
    again measured 0; and keeps-serving asks for 25% of the before window's whole 240 answers, none
    taken off."""
    after = {"frontend": (50.0, 12.0), "cart": (120.0, 0.0)}
    left_out = {"requests": {"kind": "promql", "probe_counted": False}, "logs": {"source": "pods"}}
    counted = {"requests": {"kind": "pod-proxy"}, "logs": {"source": "pods"}}
    rules = verdict(5, after, left_out)
    screen, serving = rules["screen-server-errors"], rules["keeps-serving"]
    assert (screen["passed"], screen["measured"]) == (True, 12.0)
    assert (serving["passed"], serving["threshold"]) == (False, 60.0)  # 25% of the before window's 240
    screen = verdict(5, after, counted)["screen-server-errors"]
    assert (screen["passed"], screen["measured"]) == (False, 0.0)
    assert sc.probe_counted({"samples": []}) and not sc.probe_counted({"samples": [], "sources": left_out})


def test_probe_requests_count_each_answer_and_each_request_left_unanswered():
    w = window("after-1", {"frontend": (0.0, 0.0)}, t0=1100)
    w["probes"] = [{"t": 1100.0, "status": 200, "ok": True, "ms": 5, "statuses": [200, 200]},
                   {"t": 1101.0, "status": 404, "ok": False, "ms": 5, "statuses": [500, 404]},
                   {"t": 1102.0, "status": None, "ok": False, "ms": 3000, "statuses": [None]},
                   {"t": 1103.0, "status": 500, "ok": False, "ms": 5}]  # a v3 attempt: no statuses recorded
    assert sc.probe_requests(w) == (3, 2)
    assert sc.probe_server_errors(w, 4) == 2
    assert sc.probe_server_errors(w, 3) == 2  # v3: the unanswered attempt and the 500, one each


def test_rules_v5_are_what_new_validations_use_and_older_bundles_are_still_judged():
    assert sc.RULES_VERSION == 5
    assert set(sc.SUPPORTED_VERSIONS) == {2, 3, 4, 5}
    assert sc.EVERY_PROBE_REQUEST_FROM <= sc.RULES_VERSION  # v5 keeps v4's probe accounting


def test_labels_count_a_v4_window_as_its_verdict_does():
    """Labels read the same figures the verdict did (labels/measure.py): under v4, the workload's."""
    from faultkit.labels import measure

    before = probed(window("before-1", {"frontend": (240.0, 0.0)}, t0=1000), [200, 200])
    after = probed(window("after-1", {"frontend": (50.0, 190.0)}, t0=1100), [500, 500])
    assert measure.ok_rate(before, "frontend", 4, "frontend") == 120.0
    assert measure.ok_rate(before, "frontend", 3, "frontend") == 240.0
    assert measure.error_rate(after, "frontend", 4) == 70.0
    assert measure.error_rate(after, "frontend", 3) == 130.0
