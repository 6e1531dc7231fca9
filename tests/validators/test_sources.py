"""Rules v5 windows record which source measured their figures; older windows keep their bytes.

On the fake platform (its sources are the protocol's, the windows, judge and report faultkit's own);
the local and kubernetes platforms' own answers are checked where they run (test_local_minishop.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from faultkit.bundles import read_object
from faultkit.observe.load import Limits
from faultkit.observe.sampler import Sampler, WindowSpec
from faultkit.report.figures import window_figures
from faultkit.validators.params import ValidationParams
from faultkit.workspace import Workspace
from tests.fakes.behaviour import Behaviour, Setting
from tests.fakes.platform import FakePlatform
from tests.helpers import retrying
from tests.helpers.cli import run_cli
from tests.validators import shop

WRONG_PORT = Setting("cart", "cart", "env.CARTSTORE_ADDR")
BEHAVIOURS = [Behaviour(WRONG_PORT, "cart", errors=1.0, log="cart store request failed"),
              Behaviour(WRONG_PORT, "frontend", errors=1.0, path="/cart")]
FAKE_SOURCES = {"requests": {"kind": "simulated", "metric": "requests by status"},
                "logs": {"source": "memory", "format": "json"}}


@pytest.fixture
def running(tmp_path) -> Iterator[tuple[Workspace, FakePlatform]]:
    ws = shop.make_workspace(tmp_path / "shop")
    platform = FakePlatform(ws, behaviours=BEHAVIOURS)
    platform.up("minishop")
    yield ws, platform
    platform.down()


@pytest.mark.parametrize(("record", "keys"), [(True, {"sources"}), (False, set())])
def test_a_window_records_its_sources_only_when_asked(running, record, keys):
    _, platform = running
    sampler = Sampler(platform, ("cart",), None, continuous_probe=False, record_sources=record)
    try:
        window = sampler.window(WindowSpec("after-1", 0.4, 0.2))
    finally:
        sampler.close()
    assert set(window) - {"name", "start", "end", "window_s", "interval_s", "samples", "logs"} == keys
    assert window.get("sources", FAKE_SOURCES) == FAKE_SOURCES


def test_a_v5_bundle_records_sources_and_judge_and_the_report_show_them(running):
    ws, platform = running
    fault = shop.cart_store_port(ws)
    params = ValidationParams(window_s=2, interval_s=0.5, repeat=1, limits=Limits(max_load_per_core=1000), rules=5)
    _, folder = retrying.validate(ws, platform, fault, params, record=False)
    assert read_object(folder, "inputs.json")["rules_version"] == 5
    for window in (folder / "windows").glob("*.json"):
        assert json.loads(window.read_text())["sources"] == FAKE_SOURCES, window.name
    proc = run_cli("judge", str(folder), "--json", cwd=ws.root, check=0)
    judged = json.loads(proc.stdout)
    # a config fault's first, uncounted change (cycle 0) and its counted one (cycle 1)
    assert judged["matches_recorded"] and set(judged["sources"]) == {f"{phase}-{cycle}" for cycle in (0, 1)
                                                                     for phase in ("before", "after", "recovery")}
    human = run_cli("judge", str(folder), cwd=ws.root, check=0).stdout
    assert "measured by: logs: memory json; requests: simulated requests by status" in human
    assert {f.sources for f in window_figures(folder)} == {"logs: memory json; requests: simulated requests by status"}


def test_a_v4_bundle_has_no_sources_and_judges_as_before(running):
    ws, platform = running
    fault = shop.cart_store_port(ws)
    params = ValidationParams(window_s=2, interval_s=0.5, repeat=1, limits=Limits(max_load_per_core=1000), rules=4)
    _, folder = retrying.validate(ws, platform, fault, params, record=False)
    assert all("sources" not in json.loads(w.read_text()) for w in (folder / "windows").glob("*.json"))
    judged = json.loads(run_cli("judge", str(folder), "--json", cwd=ws.root, check=0).stdout)
    assert judged["matches_recorded"] and judged["sources"] == {}
    assert {f.sources for f in window_figures(folder)} == {""}
