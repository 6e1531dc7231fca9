"""Stability on a real minishop: the gate's validator with a second window fails a fault admitted at
one window length and rejected at the second as flaky.

`validate --stability` recording both verdicts and `catalog build` leaving the entry out runs on the
fake platform (test_stability_fake.py, issue 29): its verdict logic needs no live shop; this one live
run of the config mechanism stays, through the gate's own platform.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from faultkit.gate.core import find_validator
from faultkit.validators.faults import load_fault
from faultkit.workspace import Workspace
from tests.validators import shop

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    with shop.running(tmp_path_factory.mktemp("shop")) as (ws, _):
        yield ws


def test_the_gate_checks_an_admitted_entry_again_and_fails_it_as_flaky(running):
    """The gate's validator with a second window: admitted at 8 s, rejected at 2 s (too short for
    the probe rule to admit), so the pull request's fault is flaky, with the second run's rules."""
    ws = running
    fault = shop.cart_store_port(ws)
    entry, _ = load_fault(ws, fault)
    verdict = find_validator(window_s=8, interval_s=1, repeat=1, max_load=1000, stability_s=2)(ws, entry)
    assert verdict["status"] == "flaky" and "probe-detects-fault" in verdict["failed_rules"], verdict["summary"]
    assert not (ws.state_dir / "journal.json").exists()
