"""`faultkit schedule run` and `schedule judge` on a real minishop (local platform), with the
light-5 schedule of the shipped release and 5 s invocations. One real run with an --invoke
command serves several tests; a second, no-action run checks that the sequence is the same.

The masking schedule is hand-made: two code faults of the same service (recommendation) injected
at the same boundary. The second rollout replaces the first fault's patched build, so while the
second is active the first fault's code does not run and its symptom probe (the home page) cannot
fail, although it fails when that fault is active alone (checked too). The shipped generator never
schedules two faults on one artifact at once, which is why this has to be crafted.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from faultkit.schedules import document

from . import replay_shop as rs

pytestmark = pytest.mark.live

INVOKE = (f"{sys.executable} -c \"import os, subprocess, sys, time; k = os.environ['FAULTKIT_INVOCATION']; "
          "w = os.environ['FAULTKIT_WORKSPACE']; open(os.path.join(w, 'seen'), 'a').write(k + ' '); "
          "c = subprocess.Popen(['sleep', '60']); open(os.path.join(w, 'child-' + k), 'w').write(str(c.pid)); "
          "time.sleep(30 if k == '3' else 0.2)\"")
SCHEDULE = "schedules/minishop-light-5-seed1.json"
HOME_BUG = "minishop-code-recommendation-featured-home"
SAME_CATEGORY = "minishop-code-recommendation-same-category"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    ws, platform = rs.make(tmp_path_factory.mktemp("replay"))
    try:
        out = rs.faultkit(ws, "schedule", "export", "--app", "minishop", "--seed", "1", "--preset", "light-5")
        assert out.returncode == 0, out.stderr
        doc = document.load(ws.root / SCHEDULE)
        yield ws, platform, doc, rs.state(platform, doc)
    finally:
        platform.down()


def run(ws: Any, *args: str) -> dict[str, Any]:
    out = rs.faultkit(ws, "schedule", "run", *args, "--json")
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def invoked(shop: Any) -> dict[str, Any]:
    ws = shop[0]
    return run(ws, SCHEDULE, "--interval", "5s", "--invoke", INVOKE, "--budget", "2s")


def read(folder: str, name: str) -> Any:
    return json.loads((Path(folder) / name).read_text())


def sequence(folder: str) -> list[tuple[int, str, str]]:
    return [(c["invocation"], c["op"], c["fault"]) for c in read(folder, "changes.json")]


def test_every_fault_is_injected_and_reverted_at_its_invocation_in_order(shop, invoked):
    ws, platform, doc, before = shop
    expected = [(e["invocation"], e["op"], e["fault"]) for e in doc["events"]]
    expected.sort(key=lambda x: (x[0], x[1] == "inject"))  # reverts before injections at a boundary
    assert sequence(invoked["record"]) == expected
    changes = read(invoked["record"], "changes.json")
    assert all(c["ok"] and c["done"] >= c["start"] for c in changes)
    invocations = read(invoked["record"], "invocations.json")
    assert [i["invocation"] for i in invocations] == list(range(doc["stats"]["invocations"] + 1))
    for c in changes:  # each change was in place before its invocation started
        assert c["done"] <= invocations[c["invocation"]]["ready"]
    # each active fault's probe ran at every invocation it was active, and failed there (admitted alone)
    probes = read(invoked["record"], "probes.json")
    for fault, f in invoked["faults"].items():
        start = next(k for k, op, x in expected if x == fault and op == "inject")
        end = next(k for k, op, x in expected if x == fault and op == "revert")
        assert sorted(p["invocation"] for p in probes if p["fault"] == fault) == list(range(start, end))
        assert not f["masked"]
    assert invoked["left_active"] == [] and invoked["aborted"] is None
    assert rs.state(platform, doc) == before
    assert not (ws.state_dir / "journal.json").exists()
    assert invoked["degradation"]["integral"] > 0 and invoked["degradation"]["requests"] > 0


def test_invoke_runs_each_invocation_and_is_killed_past_its_budget(shop, invoked):
    folder = Path(invoked["record"])
    n = shop[2]["stats"]["invocations"]
    assert (folder / "workspace" / "seen").read_text().split() == [str(k) for k in range(n)]
    results = {i["invocation"]: i["invoke"] for i in read(invoked["record"], "invocations.json") if "invoke" in i}
    assert sorted(results) == list(range(n))
    assert results[3]["killed"] and results[3]["exit"] == -signal.SIGKILL
    assert 2.0 <= results[3]["ended"] - results[3]["started"] < 4.0
    assert all(not r["killed"] and r["exit"] == 0 for k, r in results.items() if k != 3)
    # the whole process group went: the killed invocation's child too
    child = int((folder / "workspace" / "child-3").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_two_runs_make_the_same_changes_in_the_same_order(shop, invoked):
    ws, platform, doc, before = shop
    baseline = run(ws, SCHEDULE, "--interval", "5s")  # no --invoke: the no-action baseline
    assert sequence(baseline["record"]) == sequence(invoked["record"])
    assert baseline["injections"] == invoked["injections"]
    assert all("invoke" not in i for i in read(baseline["record"], "invocations.json"))
    assert rs.state(platform, doc) == before


def test_judge_agrees_with_the_record_and_refuses_a_tampered_one(shop, invoked):
    ws = shop[0]
    judged = rs.faultkit(ws, "schedule", "judge", invoked["record"], "--json")
    assert judged.returncode == 0, judged.stderr
    again = json.loads(judged.stdout)
    assert again.pop("matches_recorded") is True
    assert again == {k: v for k, v in invoked.items() if k != "record"}
    probes = Path(invoked["record"]) / "probes.json"
    text = probes.read_text()
    try:
        probes.write_text(text.replace('"ok": false', '"ok": true', 1))
        tampered = rs.faultkit(ws, "schedule", "judge", invoked["record"])
        assert tampered.returncode == 1
        assert "probes.json digest mismatch" in tampered.stderr and "Traceback" not in tampered.stderr
    finally:
        probes.write_text(text)


def test_sigkill_mid_run_then_recover_leaves_the_app_as_at_the_start(shop, tmp_path):
    ws, platform, doc, before = shop
    proc = rs.popen(ws, "schedule", "run", SCHEDULE, "--interval", "5s", "--runs", str(tmp_path), "--json")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until the config faults of invocation 3 are in place
        found = list(tmp_path.glob("*/*/invocations.json"))
        if found and any(i["invocation"] == 3 and "ready" in i for i in json.loads(found[0].read_text() or "[]")):
            break
        time.sleep(0.2)
    else:
        pytest.fail("the run never reached invocation 3")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert rs.state(platform, doc) != before  # faults left on the app
    recovered = rs.faultkit(ws, "recover")
    assert recovered.returncode == 0, recovered.stderr
    assert recovered.stdout.count("\n") == 4  # two rollouts and two settings, undone
    assert rs.state(platform, doc) == before
    assert not (ws.state_dir / "journal.json").exists()


def test_sigterm_reverts_every_active_fault(shop, tmp_path):
    ws, platform, doc, before = shop
    proc = rs.popen(ws, "schedule", "run", SCHEDULE, "--interval", "5s", "--runs", str(tmp_path), "--json")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(tmp_path.glob("*/*/changes.json")):
        time.sleep(0.2)
    while time.monotonic() < deadline:
        if any(c["ok"] for c in json.loads(next(tmp_path.glob("*/*/changes.json")).read_text() or "[]")):
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 130
    assert rs.state(platform, doc) == before
    folder = next(tmp_path.glob("*/*"))
    run_record = read(str(folder), "run.json")
    assert run_record["aborted"] == "terminated"
    assert rs.faultkit(ws, "schedule", "judge", str(folder)).returncode == 0


def test_faults_that_mask_each_other_are_reported_as_masked(shop, tmp_path):
    ws, platform, doc, before = shop
    masking = rs.hand_made(doc, 4, [(0, "inject", HOME_BUG), (0, "inject", SAME_CATEGORY),
                                    (3, "revert", SAME_CATEGORY), (3, "revert", HOME_BUG)])
    alone = rs.hand_made(doc, 2, [(0, "inject", HOME_BUG), (2, "revert", HOME_BUG)])
    for name, d in (("masking", masking), ("alone", alone)):
        document.write(d, tmp_path / f"{name}.json")
    # a loaded machine can slow a passing probe past the default 1000 ms, which counts as a symptom
    slow = ("--latency-ms", "5000")
    figures = run(ws, str(tmp_path / "masking.json"), "--interval", "4s", "--runs", str(tmp_path / "runs"), *slow)
    assert figures["masked"] == [{"fault": HOME_BUG, "active_with": [SAME_CATEGORY]}]
    assert figures["faults"][HOME_BUG]["probes"] == 3 and figures["faults"][SAME_CATEGORY]["failed"] == 3
    solo = run(ws, str(tmp_path / "alone.json"), "--interval", "4s", "--runs", str(tmp_path / "runs"), *slow)
    assert solo["masked"] == [] and solo["faults"][HOME_BUG]["failed"] == 2
    assert rs.state(platform, doc) == before


def test_a_schedule_of_another_release_is_refused_with_one_line(shop, tmp_path):
    ws, platform, doc, before = shop
    other = {**doc, "release": {**doc["release"], "digest": "sha256:" + "0" * 64}}
    document.write(other, tmp_path / "other.json")
    out = rs.faultkit(ws, "schedule", "run", str(tmp_path / "other.json"), "--interval", "5s")
    assert out.returncode == 1
    assert out.stderr.startswith("Error: ") and out.stderr.count("\n") == 1 and "digest" in out.stderr
    missing = rs.hand_made(doc, 2, [(0, "inject", "minishop-no-such-fault"), (1, "revert", "minishop-no-such-fault")])
    document.write(missing, tmp_path / "missing.json")
    out = rs.faultkit(ws, "schedule", "run", str(tmp_path / "missing.json"), "--interval", "5s")
    assert out.returncode == 1 and "minishop-no-such-fault not in release" in out.stderr
    assert rs.state(platform, doc) == before
