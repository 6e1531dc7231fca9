"""Campaign planning, state and projection, without running an app: real catalogs, real shipped
bundles, real git repositories, the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import git
import pytest

from faultkit.campaigns import timing
from faultkit.campaigns.plan import Plan, catalog_faults, new_plan, select
from faultkit.campaigns.projection import makespan, project, scale
from faultkit.campaigns.state import Attempt, FaultState, FaultStore, locked
from faultkit.campaigns.worker import validate_args
from faultkit.errors import InputError, UsageError
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
SHIPPED = Workspace(root=REPO, state_dir=REPO / ".faultkit")


def test_window_counts_follow_the_protocol():
    assert timing.windows("code", 2) == 6
    assert timing.windows("direct", 2) == 6
    assert timing.windows("config", 2) == 9  # one uncounted cycle first
    assert timing.windows("config", 1) == 6


def test_setup_times_are_measured_from_the_shipped_bundles():
    over = timing.measure([REPO / "evidence"])
    # every finished bundle of the revalidation campaigns: both verdicts of each entry, and the runs
    # that were rejected or measured the machine (the v4 campaign of the four flaky entries included),
    # and Bank of Anthos' six campaigns (29 config runs, 7 direct, 5 code)
    assert over.measured == {"code": 68, "config": 106, "direct": 47}
    # a code fault's static stages (its service's tests, the build) take longer than none at all
    assert over.setup_s["code"] > over.setup_s["direct"]
    assert over.expected_s("config", 300, 2) > over.expected_s("code", 300, 2) > 6 * 300


def test_queue_puts_the_longest_expected_first():
    over = timing.measure([REPO / "evidence"])
    ids = ("minishop-checkout-instance-failure", "minishop-code-checkout-shipping-quote",
           "minishop-checkout-env-payment-addr-port")
    plan = new_plan(SHIPPED, "minishop", ids, False, None, workers=2, platform="local", window_s=5, interval_s=1,
                    repeat=2, attempts=3, max_load=None, overheads=over)
    assert [f.mechanism for f in plan.faults] == ["config", "code", "direct"]
    assert [f.expected_s for f in plan.faults] == sorted((f.expected_s for f in plan.faults), reverse=True)


def test_plan_survives_a_round_trip_through_its_file(tmp_path):
    over = timing.measure([REPO / "evidence"])
    plan = new_plan(SHIPPED, "minishop", (), True, None, workers=3, platform="local", window_s=300, interval_s=2,
                    repeat=2, attempts=2, max_load=0.5, overheads=over)
    plan.write(tmp_path)
    assert Plan.read(tmp_path) == plan
    assert len(plan.faults) == len(catalog_faults(SHIPPED, "minishop"))


def test_rules_stability_and_steal_reach_every_validation(tmp_path):
    """A revalidation under rules v3 at two windows (issue 21) is one campaign: each worker's
    validate gets both, and the steal limit; a plan written before they existed reads as validate's
    defaults."""
    over = timing.measure([REPO / "evidence"])
    plan = new_plan(SHIPPED, "minishop", ("minishop-checkout-instance-failure",), False, None, workers=1,
                    platform="local", window_s=8, interval_s=1, repeat=1, attempts=1, max_load=None, overheads=over,
                    rules=3, stability="4s", max_steal=0.5)
    args = validate_args(plan, plan.faults[0], tmp_path)
    assert args[args.index("--rules") + 1] == "3" and args[args.index("--stability") + 1] == "4s"
    assert args[args.index("--max-steal") + 1] == "0.5"
    plan.write(tmp_path)
    old = json.loads((tmp_path / "plan.json").read_text())
    del old["rules"], old["stability"], old["max_steal"]
    (tmp_path / "plan.json").write_text(json.dumps(old))
    args = validate_args(Plan.read(tmp_path), plan.faults[0], tmp_path)
    assert "--rules" not in args and "--max-steal" not in args


def test_fault_selection_refuses_what_it_cannot_plan():
    with pytest.raises(UsageError, match="one of --fault"):
        select(SHIPPED, "minishop", (), False, None)
    with pytest.raises(UsageError, match="one of --fault"):
        select(SHIPPED, "minishop", ("minishop-cart-cpu-stress",), True, None)
    with pytest.raises(InputError, match="nope: not in the minishop catalog"):
        select(SHIPPED, "minishop", ("nope",), False, None)
    with pytest.raises(InputError, match="no catalog for 'shop'"):
        select(SHIPPED, "shop", ("x",), False, None)


def test_changed_since_picks_entries_and_patches_changed_in_git(ws):
    import shutil

    for fid in ("minishop-checkout-instance-failure", "minishop-code-checkout-shipping-quote"):
        shutil.copy(REPO / "catalog" / "minishop" / f"{fid}.yaml", ws.catalog_dir / "minishop")
    patch_name = "minishop-code-checkout-shipping-quote.diff"
    shutil.copy(REPO / "patches" / "minishop" / patch_name, ws.patches_dir / "minishop")
    repo = git.Repo.init(ws.root)
    repo.git.add(A=True)
    who = git.Actor("t", "t@example.com")
    repo.index.commit("catalog", author=who, committer=who)
    with pytest.raises(InputError, match="nothing changed since HEAD"):
        select(ws, "minishop", (), False, "HEAD")
    patch = ws.patches_dir / "minishop" / "minishop-code-checkout-shipping-quote.diff"
    patch.write_text(patch.read_text() + "\n")
    assert [f.id for f in select(ws, "minishop", (), False, "HEAD")] == ["minishop-code-checkout-shipping-quote"]
    with pytest.raises(UsageError, match="--changed-since nosuchref: git cannot diff"):
        select(ws, "minishop", (), False, "nosuchref")


def test_projection_shares_the_faults_over_the_workers():
    assert makespan([10, 10, 10, 10], 2) == 20
    assert makespan([30, 20, 10], 2) == 30  # longest first: 30 | 20 + 10
    assert scale({"code": 22, "config": 30, "direct": 17}, 700) == {"code": 223, "config": 304, "direct": 173}
    over = timing.measure([REPO / "evidence"])
    one = project({"code": 4, "direct": 4}, over, 5, 1, 1)
    two = project({"code": 4, "direct": 4}, over, 5, 1, 2)
    assert one.faults == two.faults == 8
    assert two.wall_s - over.instance_up_s == pytest.approx((one.wall_s - over.instance_up_s) / 2, rel=0.01)


def test_a_retried_outcome_goes_back_to_the_queue_until_attempts_are_spent(tmp_path):
    store = FaultStore(tmp_path)
    s = store.start(FaultState("f"), 0, "bundles/f", 1.0)
    assert store.read("f").state == "running"
    s = store.finish(s, Attempt("overloaded", "bundles/f/1", "load", 0, 3.0), None, 2)
    assert (s.state, len(s.attempts)) == ("queued", 1)
    s = store.requeue(store.start(s, 1, "bundles/f", 2.0), Attempt("interrupted", None, "stop", 1, 1.0))
    s = store.finish(store.start(s, 1, "bundles/f", 3.0), Attempt("overloaded", "bundles/f/2", "load", 1, 3.0), None, 2)
    # the campaign's own stop is not one of the fault's attempts; two overloaded runs are
    assert (s.state, s.outcome, [a.outcome for a in s.attempts]) == ("done", "overloaded",
                                                                     ["overloaded", "interrupted", "overloaded"])
    assert store.read("f") == s


def test_one_campaign_process_per_folder(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR|"
                               "os.O_CREAT); fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
                               str(tmp_path / "campaign.lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(UsageError, match="another campaign process runs on this folder"):
            with locked(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
    with locked(tmp_path):  # the kernel dropped the dead holder's lock
        pass


def test_the_command_refuses_bad_calls_with_one_line(ws, cli):
    proc = cli("campaign", "run", "--fault", "x", check=2)
    assert proc.stderr.strip() == "Error: name the app with --app APP (or continue a campaign with --resume DIR)"
    proc = cli("campaign", "run", "--app", "minishop", "--fault", "nope", check=1)
    assert proc.stderr.strip().splitlines() == ["Error: nope: not in the minishop catalog; `faultkit catalog lint` "
                                                "lists it"]
    empty = ws.root / "empty"
    empty.mkdir()
    proc = cli("campaign", "run", "--resume", str(empty), check=1)
    assert "no campaign plan here" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = cli("campaign", "run", "--resume", str(empty), "--app", "minishop", check=2)
    assert "--resume DIR continues that folder's plan" in proc.stderr
    proc = cli("campaign", "run", "--app", "minishop", "--all", "--stability", "soon", check=2)
    assert proc.stderr.strip() == "Error: 'soon' is not a duration; write it like 20s or 5m"


def test_plan_command_projects_the_catalog(ws, cli):
    import shutil

    for path in (REPO / "catalog" / "minishop").glob("*.yaml"):
        shutil.copy(path, ws.catalog_dir / "minishop")
    data = json.loads(cli("campaign", "plan", "--app", "minishop", "--window", "5m", "--workers", "4", "--faults",
                          "700", "--json", check=0).stdout)
    assert data["faults"] == 700 and data["workers"] == 4
    assert data["windows_per_fault"] == {"code": 6, "config": 9, "direct": 6}
    assert data["wall_s"] < data["serial_s"] / 3.9
    text = cli("campaign", "plan", "--app", "minishop", "--window", "20s", check=0).stdout
    assert "on 1 workers" in text and "config" in text


def test_a_run_is_never_taken_for_an_earlier_attempts_bundle(tmp_path):
    from faultkit.campaigns.worker import newest_run

    earlier, later = tmp_path / "20261201T080000000Z", tmp_path / "20261201T090000000Z"
    earlier.mkdir()
    start = timing.run_started(later.name)
    assert start is not None
    assert newest_run(tmp_path, start) is None  # this attempt made no folder yet: none is its own
    later.mkdir()
    assert newest_run(tmp_path, start) == later
    assert newest_run(tmp_path) == later
