"""SIGKILL the validator during each stage in turn, on the fake platform; the real `recover` must
leave the application exactly as before: the manifest values, the builds that run, the instances
and the actions in force.

The journal logic of test_recover.py without a live minishop: the validation runs in a real child
process (tests/fakes/hold.py) that is really SIGKILLed, the fake's state left in its file as the
kill found it (a rollout half done included), and faultkit's own recover() reads the journal and
restores it. test_recover.py keeps one live kill per mechanism, on real processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from faultkit.validators.journal import Journal, recover
from faultkit.workspace import Workspace
from tests.fakes.behaviour import ActionOn, Behaviour, BuildHas, Setting
from tests.fakes.platform import FakePlatform
from tests.validators import shop
from tests.validators.test_recover import CODE_STAGES, CONFIG_STAGES, DIRECT_STAGES

REPO = Path(__file__).resolve().parents[2]
# run as a module from the checkout: as a script, its folder would put tests/fakes/platform.py
# before the standard library's `platform` on the child's path
HOLD = "tests.fakes.hold"
MARKER = '["options"][0]["price"]'
# what the three faults do on the fake: said here, nowhere else
BEHAVIOURS = [
    Behaviour(BuildHas("checkout", MARKER), "checkout", errors=1.0, log="unhandled error: KeyError"),
    Behaviour(Setting("cart", "cart", "env.CARTSTORE_ADDR"), "cart", errors=1.0, log="cart store request failed"),
    Behaviour(ActionOn("instance-failure", "cartstore"), "cartstore", unready=True),
    Behaviour(ActionOn("instance-failure", "cartstore"), "cart", errors=1.0, log="cart store request failed"),
]
ROLLOUT_S = 1.0  # long enough to be killed in the middle of


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, Path]]:
    ws = shop.make_workspace(tmp_path_factory.mktemp("recover-fake"))
    # the build stage still runs a real check of the patched tree, but compiling it rather than the
    # service's unit tests (8 s a run on a loaded CI machine, nine runs here): what is tested is the
    # journal, and test_validate.py runs the build stage in full
    app_yaml = ws.apps_dir / "minishop" / "app.yaml"
    full = "  test: [python3, -m, pytest, -q, -p, no:cacheprovider, tests]\n"
    assert full in app_yaml.read_text()
    app_yaml.write_text(app_yaml.read_text().replace(full, "  test: [python3, -m, compileall, -q, .]\n"))
    shop.checkout_shipping_field(ws)
    shop.cart_store_port(ws)
    shop.cartstore_frozen(ws)
    state = ws.state_dir / "fake-platform.json"
    platform = FakePlatform(ws, state_file=state, behaviours=BEHAVIOURS, rollout_s=ROLLOUT_S)
    platform.up("minishop")
    yield ws, state
    platform.down()


def snapshot(platform: FakePlatform) -> dict[str, Any]:
    """What must be identical after recovery (the fake's instances stand for the local processes)."""
    instances = platform.instances()
    return {
        "builds": {i.service: i.build for i in instances},
        "ready": all(i.ready for i in instances),
        "processes": len(instances),
        "actions": platform.active_actions(),
        "cart_store_addr": platform.read_field("cart", "cart", "env.CARTSTORE_ADDR"),
    }


def _current(evidence: Path) -> str | None:
    for p in evidence.glob("*/stages.json"):
        try:
            return str(json.loads(p.read_text()).get("current"))
        except ValueError:
            return None  # caught between write and rename: read again
    return None


def kill_during(ws: Workspace, state: Path, fault: str, stage: str, evidence: Path) -> None:
    """SIGKILL a validation inside `stage`: held there by the on_stage hook, except in the
    `:applying` stages of a rollout or setting, killed while the fake has old and new instances."""
    mid_change = stage.endswith(":applying") and fault != "t-cartstore-frozen"
    proc = subprocess.Popen(
        [sys.executable, "-m", HOLD, str(state), fault, str(evidence), *([] if mid_change else [stage])],
        env={**shop.env_for(ws), "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.getenv("PYTHONPATH")]))},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 90
    try:
        while time.time() < deadline:
            here = _current(evidence) == stage
            if here and (not mid_change or json.loads(state.read_text()).get("rolling")):
                break
            if proc.poll() is not None:
                pytest.fail(f"validation ended before reaching {stage}: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.02)
        else:
            pytest.fail(f"never reached {stage}")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stderr.close()


@pytest.mark.parametrize(
    ("fault", "stage"),
    [("t-checkout-quote-options", s) for s in CODE_STAGES]
    + [("t-cart-store-port", s) for s in CONFIG_STAGES]
    + [("t-cartstore-frozen", s) for s in DIRECT_STAGES],
)
def test_sigkill_then_recover_restores_baseline(running, tmp_path, fault, stage):
    ws, state = running
    platform = FakePlatform(ws, state_file=state)
    before = snapshot(platform)
    kill_during(ws, state, fault, stage, tmp_path / "evidence")
    journal = Journal(ws.state_dir / "journal.json")
    recover(platform, journal)
    assert snapshot(platform) == before
    assert not (ws.state_dir / "journal.json").exists()
    leftovers = [
        p for p in psutil.process_iter(["cmdline"]) if str(tmp_path / "evidence") in " ".join(p.info["cmdline"] or [])
    ]
    assert not leftovers
    platform.close()


def test_a_kill_mid_rollout_leaves_old_and_new_instances_until_recovered(running, tmp_path):
    """The fake really models the half-done rollout the mid-change kill is about: two sets of
    instances, the new one on the fault's build, until recover rolls every one back."""
    ws, state = running
    platform = FakePlatform(ws, state_file=state)
    [baseline] = {i.build for i in platform.instances("checkout")}
    kill_during(ws, state, "t-checkout-quote-options", "inject:applying", tmp_path / "evidence")
    left = platform.instances("checkout")
    assert len(left) == 2 and {i.build for i in left} - {baseline}
    assert [j.state for j in Journal(ws.state_dir / "journal.json").open_changes()] == ["pending"]
    assert recover(platform, Journal(ws.state_dir / "journal.json")) == [f"rolled checkout back to {baseline[:19]}"]
    assert [i.build for i in platform.instances("checkout")] == [baseline]
