"""On a real minishop: the probe runs at a rate sized by the window, and a latency bound makes a
network delay that returns no errors a symptom the probe sees."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from faultkit.observe.load import Limits
from faultkit.observe.probing import PROBE_MIN_ATTEMPTS, probe_period
from faultkit.validators.pipeline import ValidationParams
from faultkit.validators.probe_rule import COVERED_SHARE, failing_share
from faultkit.workspace import Workspace
from tests.helpers.retrying import validate
from tests.validators import shop

pytestmark = pytest.mark.live

PARAMS = ValidationParams(window_s=8, interval_s=1, repeat=1, rollout_timeout_s=30,
                          limits=Limits(max_load_per_core=1e9), rules=3)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, object]]:
    with shop.running(tmp_path_factory.mktemp("shop")) as up:
        yield up


def frontend_delayed(ws: Workspace, bound: int | None) -> str:
    """3 s on what the frontend sends back: inside the load generator's 5 s timeout, and the
    frontend's own counter sees its answers leave as 200s, so nothing anywhere is an error. The
    bound sits well above the shop's round trip at rest (up to 2 s on a 2-core machine at load 36)."""
    probe = {"service": "frontend", "method": "GET", "path": "/cart?user=probe", "expect_status": 200,
             "timeout_s": 8}
    if bound:
        probe["expect_latency_ms"] = bound
    return shop.save(ws, shop.direct(f"t-frontend-delay-{bound or 'none'}", "frontend", "network-delay", {"ms": 3000},
                                     category="dependency", probe=probe))


def probe_rule(verdict: dict, name: str) -> dict:
    found = [r for r in verdict["rules"] if r["rule"] == name and r.get("counted", True)]
    assert found, f"no {name} rule: {verdict['summary']}"
    return found[0]


def test_a_latency_bound_probe_detects_a_delay_that_returns_no_errors(running):
    ws, platform = running
    verdict, folder = validate(ws, platform, frontend_delayed(ws, 2500), PARAMS, record=False)
    detects = probe_rule(verdict, "probe-detects-fault")
    assert detects["passed"], detects
    after = json.loads((folder / "windows" / "after-1.json").read_text())
    judged = [a for a in after["probes"] if a["t"] >= after["start"] + 0.25 * after["window_s"]]
    # the shop answered no attempt with an error: the bound (or, on a loaded machine, the probe's own
    # 8 s cutoff: status None) is what failed them
    assert {a["status"] for a in judged} <= {200, None}, [(a["status"], a.get("error")) for a in judged]
    assert sum(1 for a in judged if a.get("slow")) >= 0.9 * len(judged)
    # the workload saw no server errors: without the bound this fault has no symptom at all
    errors = probe_rule(verdict, "screen-server-errors")
    assert errors["measured"] < errors["threshold"], errors
    for name in ("probe-healthy-before", "recovery-probe-healthy"):
        assert probe_rule(verdict, name)["passed"], probe_rule(verdict, name)
    # the rate is sized by the window: an 8 s window at 1 s sampling probes every 0.24 s, not 4 times
    assert after["probe_period_s"] == probe_period(8, 1) == 0.24
    # one attempt at a time: each slow attempt delays the next, so few attempts run, back to back
    # over the judged time (they stand for the count), or the full count when they are quick
    start, end = after["start"] + 0.25 * after["window_s"], after["start"] + after["window_s"]
    covered = failing_share(after["probes"], start, end, after["probe_period_s"])
    assert len(judged) >= PROBE_MIN_ATTEMPTS or covered >= COVERED_SHARE, (len(judged), covered)
    assert not (ws.state_dir / "journal.json").exists()


def test_without_the_bound_the_same_delay_goes_unseen(running):
    ws, platform = running
    # the same change twice is a duplicate to lint: this entry replaces the bounded one
    (ws.catalog_dir / "minishop" / "t-frontend-delay-2500.yaml").unlink(missing_ok=True)
    verdict, _ = validate(ws, platform, frontend_delayed(ws, None), PARAMS, record=False)
    detects = probe_rule(verdict, "probe-detects-fault")
    assert not detects["passed"], detects
    assert verdict["status"] == "rejected"
