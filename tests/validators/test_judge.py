"""judge() on hand-built records: which rules hold, which decide, and how cycles make a status."""

from __future__ import annotations

from faultkit.validators.judge import judge
from tests.validators import windows as w


def verdict(inputs=None, cycles=None, **stage_args):
    inputs = inputs or w.inputs()
    windows: dict = {}
    records = [f(windows) for f in cycles] if cycles is not None else [w.cycle(1, windows)]
    return judge(inputs, w.stages(records, **stage_args), windows)


def rules(v, cycle=1) -> dict:
    return {r["rule"]: r for r in v["rules"] if r.get("cycle") == cycle}


def test_a_clean_cycle_is_admitted_with_every_rule_reported():
    v = verdict()
    assert v["status"] == "admitted" and v["failed_rules"] == [] and v["cycles"] == [{"index": 1, "passed": True}]
    assert v["summary"] == "admitted: every rule held in 1 of 1 injections"
    r = rules(v)
    assert {"injection-applied", "message-absent-before", "message-present-after", "keeps-serving", "screening",
            "effect-matches-intent", "recovery-artifact-restored", "recovery-ready", "recovery-serving",
            "recovery-message-stopped", "other-site-unaffected"} <= set(r)
    assert r["message-present-after"]["measured"] == 12
    assert r["screen-server-errors"]["measured"] == 12.0 and r["screen-server-errors"]["passed"]
    assert r["screen-new-error-logs"]["measured"] == 12.0 and r["screen-new-error-logs"]["passed"]
    assert not r["screen-restart"]["passed"]  # a criterion not met is reported, and decides nothing
    assert r["screening"]["measured"] == 2
    assert all(x["counted"] for x in r.values())


def test_message_already_present_before_rejects():
    def cyc(windows):
        before = w.window("before-1", w.HEALTHY, logs=[w.log(5, "frontend", f"{w.MESSAGE} once")])
        return w.cycle(1, windows, before=before)

    v = verdict(cycles=[cyc])
    assert v["status"] == "rejected" and v["failed_rules"] == ["message-absent-before"]
    assert v["summary"] == "rejected: message-absent-before"


def test_message_absent_after_names_what_was_logged_instead():
    def cyc(windows):
        after = w.window("after-1", w.FAILING, logs=[w.log(i, "cart", f"store timeout {i}") for i in range(12)])
        return w.cycle(1, windows, after=after)

    r = rules(verdict(cycles=[cyc]))
    assert not r["message-present-after"]["passed"]
    assert "ERROR lines there instead: ['store timeout 0'" in r["message-present-after"]["detail"]


def test_an_app_that_stops_serving_is_rejected():
    def cyc(windows):
        after = w.window("after-1", {"frontend": (20, 90), "cart": (0, 60)}, logs=w.failing_after())
        return w.cycle(1, windows, after=after)

    v = verdict(cycles=[cyc])
    assert v["failed_rules"] == ["keeps-serving"]
    assert (rules(v)["keeps-serving"]["measured"], rules(v)["keeps-serving"]["threshold"]) == (20.0, 30.0)


def test_no_screening_criterion_met_fails_screening_only():
    def cyc(windows):
        quiet = {"frontend": (120, 1), "cart": (60, 1)}
        logs = [w.log(i, "cart", f"{w.MESSAGE} {i}") for i in range(3)]
        return w.cycle(1, windows, after=w.window("after-1", quiet, logs=logs))

    v = verdict(w.inputs(effect="latency"), cycles=[cyc])
    assert v["status"] == "rejected" and v["failed_rules"] == ["screening"]  # not the screen-* criteria
    assert rules(v)["screening"]["measured"] == 0


def test_a_restart_alone_meets_screening():
    def cyc(windows):
        after = w.window("after-1", w.HEALTHY, logs=[w.log(1, "cart", w.MESSAGE)], last={"cart-0": {"restarts": 1}})
        return w.cycle(1, windows, after=after)

    v = verdict(w.inputs(effect="restart"), cycles=[cyc])
    assert v["status"] == "admitted", v["failed_rules"]
    assert rules(v)["screen-restart"]["passed"] and not rules(v)["screen-server-errors"]["passed"]


def test_an_oom_kill_diverges_from_a_declared_restart():
    def cyc(windows):
        after = w.window("after-1", w.HEALTHY, logs=[w.log(1, "cart", w.MESSAGE)],
                         last={"cart-0": {"restarts": 1, "oom_kills": 1}})
        return w.cycle(1, windows, after=after)

    assert verdict(w.inputs(effect="restart"), cycles=[cyc])["failed_rules"] == ["effect-matches-intent"]
    assert verdict(w.inputs(effect="oom-restart"), cycles=[cyc])["status"] == "admitted"


def test_recovery_rules():
    def lingering(windows):
        # the message goes on past the first quarter of the recovery window
        recovery = w.window("recovery-1", w.HEALTHY, t0=1200, logs=[w.log(40, "cart", w.MESSAGE)])
        return w.cycle(1, windows, recovery=recovery)

    def unready(windows):
        return w.cycle(1, windows, recovery=w.window("recovery-1", w.HEALTHY, t0=1200,
                                                     last={"frontend-0": {"ready": False}}))

    def not_reverted(windows):
        return w.cycle(1, windows, revert_ok=False)

    def early_fade(windows):
        # lines in the first quarter are a symptom fading, not a failed recovery
        recovery = w.window("recovery-1", w.HEALTHY, t0=1200, logs=[w.log(10, "cart", w.MESSAGE)])
        return w.cycle(1, windows, recovery=recovery)

    assert verdict(cycles=[lingering])["failed_rules"] == ["recovery-message-stopped"]
    assert verdict(cycles=[unready])["failed_rules"] == ["recovery-ready"]
    assert verdict(cycles=[not_reverted])["failed_rules"] == ["recovery-artifact-restored"]
    assert verdict(cycles=[early_fade])["status"] == "admitted"


def test_a_two_site_app_cannot_pass_unobserved():
    v = verdict(w.inputs(sites=["eu", "us"]))
    assert v["failed_rules"] == ["other-site-unaffected"]


def test_probe_must_fail_after_and_be_healthy_late_in_recovery():
    def cyc(windows):
        before = w.window("before-1", w.HEALTHY, probes=[True, True])
        after = w.window("after-1", w.FAILING, t0=1100, logs=w.failing_after(), probes=[True, False])
        recovery = w.window("recovery-1", w.HEALTHY, t0=1200, probes=[False, True, True])
        return w.cycle(1, windows, before=before, after=after, recovery=recovery)

    r = rules(verdict(cycles=[cyc]))
    assert r["probe-detects-fault"]["passed"] and r["probe-detects-fault"]["measured"] == "1/2 failed"
    assert r["recovery-probe-healthy"]["passed"]  # its one failure is in the first half


def test_some_injections_passing_is_flaky():
    def good(windows):
        return w.cycle(1, windows)

    def bad(windows):
        return w.cycle(2, windows, after=w.window("after-2", w.HEALTHY, t0=2100))

    v = verdict(w.inputs(repeat=2), cycles=[good, bad])
    assert v["status"] == "flaky"
    assert v["cycles"] == [{"index": 1, "passed": True}, {"index": 2, "passed": False}]
    assert v["summary"].startswith("flaky: every rule held in 1 of 2 injections; failed elsewhere: ")
    assert "message-present-after" in v["failed_rules"]
    assert verdict(w.inputs(repeat=2), cycles=[bad, bad])["status"] == "rejected"


def test_fewer_cycles_than_repeat_is_not_admitted():
    # every observed injection held, but fewer than asked for: not admitted, and not a clean rejection
    assert verdict(w.inputs(repeat=2))["status"] == "flaky"


def test_the_uncounted_first_cycle_of_a_config_fault_decides_only_whether_it_was_made_and_undone():
    def first(windows):
        return w.cycle(0, windows, counted=False, after=w.window("after-0", w.HEALTHY, t0=1100))

    def second(windows):
        return w.cycle(1, windows)

    v = verdict(w.inputs(mechanism="config"), cycles=[first, second])
    assert v["status"] == "admitted" and v["cycles"] == [{"index": 1, "passed": True}]
    assert rules(v, 0)["message-present-after"]["counted"] is False
    assert rules(v, 0)["injection-applied"]["counted"] is True

    def first_not_undone(windows):
        return w.cycle(0, windows, counted=False, revert_ok=False)

    v = verdict(w.inputs(mechanism="config"), cycles=[first_not_undone, second])
    assert v["status"] == "rejected" and v["failed_rules"] == ["recovery-artifact-restored"]


def test_a_failed_stage_rejects_before_any_cycle():
    v = verdict(cycles=[], lint_ok=False)
    assert v["status"] == "rejected" and v["failed_rules"] == ["entry-lints-clean"]
    assert v["summary"] == "rejected: entry-lints-clean"


def test_an_aborted_run_says_why_and_a_stopped_inject_is_not_applied():
    def stopped(windows):
        c = w.cycle(1, windows)
        for k in ("inject", "after", "revert", "recovery"):
            del c[k]
        return c

    v = verdict(cycles=[stopped], aborted="interrupted")
    assert v["status"] == "aborted" and v["summary"] == "aborted: interrupted"
    assert not rules(v)["injection-applied"]["passed"]


def test_the_same_records_give_the_same_verdict():
    assert verdict() == verdict()
