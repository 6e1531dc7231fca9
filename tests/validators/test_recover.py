"""SIGKILL the validator during a change on the live local minishop; `faultkit recover` must leave
the application exactly as before: the manifest values, the builds that run, and no extra processes.

Every stage of every mechanism is killed in turn on the fake platform (test_recover_fake.py, the
journal's logic, issue 29). Here one kill per mechanism stays live, the one only real processes can
answer: in the middle of the change itself (a rollout's surge, a setting's restart, an action just
started), where a real platform has new processes running beside the old, and recovery must leave
none of them behind.
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

import psutil
import pytest

from faultkit.workspace import Workspace
from tests.helpers.cli import run_cli
from tests.validators import shop

pytestmark = pytest.mark.live

CODE_STAGES = [
    "lint",
    "patch",
    "build",
    "marker",
    "baseline",
    "window before-1",
    "inject",
    "inject:applying",
    "window after-1",
    "revert",
    "revert:applying",
    "window recovery-1",
]
CONFIG_STAGES = ["inject:applying", "window after-0", "revert", "window after-1"]
DIRECT_STAGES = ["inject:applying", "window after-1"]
# live: one per mechanism (code, config, direct), killed while the platform carries the change out
LIVE = [("t-checkout-quote-options", "inject:applying"), ("t-cart-store-port", "inject:applying"),
        ("t-cartstore-frozen", "inject:applying")]
REPO = Path(__file__).resolve().parents[2]
HOLD_AT = Path(__file__).with_name("hold_at.py")  # runs validate() with a hook that blocks at a stage


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, object]]:
    with shop.running(tmp_path_factory.mktemp("recover")) as (ws, platform):
        shop.checkout_shipping_field(ws)
        shop.cart_store_port(ws)
        shop.cartstore_frozen(ws)
        yield ws, platform


def snapshot(platform) -> dict:
    """What must be identical after recovery."""
    instances = platform.instances()
    return {
        "builds": {i.service: i.build for i in instances},
        "ready": all(i.ready for i in instances),
        "processes": sum(len(p) for p in platform.pids().values()),
        "actions": platform.active_actions(),
        "cart_store_addr": platform.read_field("cart", "cart", "env.CARTSTORE_ADDR"),
    }


def kill_during(ws: Workspace, fault: str, stage: str, evidence: Path) -> None:
    """SIGKILL a validation inside `stage`: the driver's on_stage hook holds it there, except in
    the `:applying` stages, where it is killed while the platform is carrying the change out."""
    # a direct action starts in milliseconds: hold it just before, with the change journalled
    mid_change = stage.endswith(":applying") and fault != "t-cartstore-frozen"
    hold = [] if mid_change else [stage]
    proc = subprocess.Popen(
        [sys.executable, str(HOLD_AT), fault, str(evidence), *hold],
        env={**shop.env_for(ws), "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.getenv("PYTHONPATH")]))},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 90
    try:
        while time.time() < deadline:
            current = next((json.loads(p.read_text()).get("current") for p in evidence.glob("*/stages.json")), None)
            if current == stage:
                break
            assert proc.poll() is None, f"validation ended before reaching {stage}"
            time.sleep(0.05)
        else:
            pytest.fail(f"never reached {stage}")
        if mid_change:
            time.sleep(0.3)  # into the middle of the rollout
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)


@pytest.mark.parametrize(("fault", "stage"), LIVE)
def test_sigkill_then_recover_restores_baseline(running, tmp_path, fault, stage):
    ws, platform = running
    before = snapshot(platform)
    kill_during(ws, fault, stage, tmp_path / "evidence")
    proc = run_cli("recover", cwd=ws.root, env=shop.env_for(ws), timeout=180)
    assert proc.returncode == 0, proc.stderr
    deadline = time.time() + 30
    while time.time() < deadline and snapshot(platform) != before:
        time.sleep(0.5)  # instances replaced by the undo become ready
    assert snapshot(platform) == before
    assert not (ws.state_dir / "journal.json").exists()
    leftovers = [
        p for p in psutil.process_iter(["cmdline"]) if str(tmp_path / "evidence") in " ".join(p.info["cmdline"] or [])
    ]
    assert not leftovers
