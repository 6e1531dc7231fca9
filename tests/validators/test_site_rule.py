"""other-site-unaffected on hand-built records: the other site's own windows decide it."""

from __future__ import annotations

from faultkit.validators.judge import judge
from faultkit.validators.site_rule import window_names
from tests.validators import windows as w


def two_site_cycle(after_b=None, recovery_b=None, probes=(True, True)):
    def make(windows):
        record = w.cycle(1, windows)
        record["sites"] = ["site-b"]
        for phase, given, t0 in (("before", None, 2000), ("after", after_b, 2100), ("recovery", recovery_b, 2200)):
            name = f"sites/site-b/{phase}-1"
            windows[name] = given or w.window(name, w.HEALTHY, t0=t0, probes=probes)
        return record
    return make


def verdict(cycle_fn):
    windows: dict = {}
    records = [cycle_fn(windows)]
    return judge(w.inputs(sites=["site-a", "site-b"]), w.stages(records), windows)


def rule(v) -> dict:
    return next(r for r in v["rules"] if r["rule"] == "other-site-unaffected")


def test_an_observed_healthy_other_site_passes_with_its_figures():
    v = verdict(two_site_cycle())
    assert v["status"] == "admitted", v["failed_rules"]
    r = rule(v)
    assert r["passed"]
    assert r["measured"].startswith("site-b: after 0 5xx/min, 120 ok/min, 0/2 probes failed, 0 restarts")


def test_errors_in_the_other_site_fail_the_rule():
    v = verdict(two_site_cycle(after_b=w.window("sites/site-b/after-1", w.FAILING, t0=2100)))
    assert v["failed_rules"] == ["other-site-unaffected"]
    assert "site-b: after: 12 5xx/min at " in rule(v)["detail"]


def test_a_restart_or_a_failed_probe_in_the_other_site_fails_the_rule():
    restarted = w.window("sites/site-b/recovery-1", w.HEALTHY, t0=2200, last={"cart-0": {"restarts": 1}})
    assert "restarts" in rule(verdict(two_site_cycle(recovery_b=restarted)))["detail"]
    probing = w.window("sites/site-b/after-1", w.HEALTHY, t0=2100, probes=(True, False))
    assert "1/2 probes failed" in rule(verdict(two_site_cycle(after_b=probing)))["detail"]


def test_the_other_sites_windows_are_read_from_the_cycle_record():
    record = {"index": 1, "counted": True, "before": "before-1", "after": "after-1", "recovery": "recovery-1",
              "sites": ["site-b"]}
    assert window_names(record) == ["sites/site-b/before-1", "sites/site-b/after-1", "sites/site-b/recovery-1"]
    assert window_names({k: v for k, v in record.items() if k != "sites"}) == []
