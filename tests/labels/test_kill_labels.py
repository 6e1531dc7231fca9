"""A kill's labels include its restart: validated for real on a running minishop.

The shipped catalog admits no kill (the restart is over before any probe can fail, so the verdict
rejects it; see tests/validators/test_validate.py), so this test validates one and derives the key
evidence and chain from its bundle with the same functions the labels of an admission use.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.bundles import read_json
from faultkit.labels.chain import causal_chain, probe_route
from faultkit.labels.checkpoints import holds
from faultkit.labels.key_evidence import counted_cycles, key_evidence
from faultkit.validators.pipeline import ValidationParams
from faultkit.workspace import Workspace
from tests.helpers.retrying import validate
from tests.validators import shop

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, object]]:
    with shop.running(tmp_path_factory.mktemp("shop")) as up:
        yield up


@pytest.mark.timeout(600)
def test_kill_checkpoints_include_a_restart_in_both_cycles(running):
    ws, platform = running
    _, folder = validate(ws, platform, shop.cart_killed(ws), ValidationParams(window_s=6, interval_s=1, repeat=2))
    inputs, stages = read_json(folder, "inputs.json"), read_json(folder, "stages.json")
    names = {c[k] for c in stages["cycles"] for k in ("before", "after") if c.get(k)}
    windows = {n: read_json(folder, f"windows/{n}.json") for n in names}
    cycles = counted_cycles(stages, windows)
    assert [c.index for c in cycles] == [1, 2]
    app = load_app(ws, "minishop")
    evidence = key_evidence(cycles, probe_route(inputs["entry"]), app.entry)
    restart = [e for e in evidence["events"] if e["service"] == "cart" and e["kind"] == "restart"]
    assert restart and all(c["count"] >= 1 for c in restart[0]["cycles"]), evidence["events"]
    cause = causal_chain(inputs["entry"], app, cycles, evidence)[0]
    assert cause["role"] == "cause" and cause["service"] == "cart"
    cps = [c for c in cause["checkpoints"] if c["signal"] == 'restarts{service="cart"}']
    assert cps, cause["checkpoints"]
    assert cps[0]["comparator"] == ">=" and cps[0]["unit"] == "restarts" and cps[0]["modality"] == "event"
    assert [o["cycle"] for o in cps[0]["observed"]] == [1, 2]
    assert all(holds(cps[0], o["after"]) and not holds(cps[0], o["before"]) for o in cps[0]["observed"])
