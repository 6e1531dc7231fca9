"""`validate --stability` on the fake platform: the verdict logic of test_stability_validate.py (admitted
at one window length, rejected at the second, so flaky with both verdicts, and `catalog build` leaves
it out with the reason) without a live minishop. The fault's effect is the behaviour table's; the
windows, the probe, the judge, the write-back and the release are faultkit's own."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import yaml

from faultkit.commands.validate_cmds import _stable
from faultkit.observe.load import Limits, Overloaded
from faultkit.validators.params import ValidationParams
from faultkit.validators.stability import Stable, validate_stable
from faultkit.workspace import Workspace
from tests.fakes.behaviour import Behaviour, Setting
from tests.fakes.platform import FakePlatform
from tests.helpers.cli import run_cli
from tests.helpers.retrying import TRIES
from tests.validators import shop

WRONG_PORT = Setting("cart", "cart", "env.CARTSTORE_ADDR")
# the cart store port fault as minishop shows it: cart's store calls fail, and so the frontend's cart
# page (the probe's), while the rest of the shop keeps serving
BEHAVIOURS = [Behaviour(WRONG_PORT, "cart", errors=1.0, log="cart store request failed"),
              Behaviour(WRONG_PORT, "frontend", errors=1.0, path="/cart")]


@pytest.fixture
def running(tmp_path) -> Iterator[tuple[Workspace, FakePlatform]]:
    ws = shop.make_workspace(tmp_path / "shop")
    platform = FakePlatform(ws, behaviours=BEHAVIOURS)
    platform.up("minishop")
    yield ws, platform
    platform.down()


def stable(ws: Workspace, platform: FakePlatform, fault: str, params: ValidationParams, second_s: float) -> Stable:
    """validate_stable, again while a cycle measured the machine (as tests/helpers/retrying does)."""
    for attempt in range(TRIES):
        try:
            return validate_stable(ws, platform, fault, params, second_s)
        except Overloaded:
            if attempt == TRIES - 1:
                raise
    raise AssertionError("unreachable")


def test_admitted_once_and_rejected_at_the_second_window_stays_out_of_the_release(running, capsys):
    ws, platform = running
    fault = shop.cart_store_port(ws)
    # as the live test: 8 s windows hold 24 judged probe attempts, 2 s windows about 8, short of the 20
    params = ValidationParams(window_s=8, interval_s=1, repeat=1, limits=Limits(max_load_per_core=1000))
    code = _stable(ws, stable(ws, platform, fault, params, 2), as_json=True)
    out = json.loads(capsys.readouterr().out)
    assert out["first"]["status"] == "admitted", out["first"]["summary"]
    assert out["second"]["status"] == "rejected" and "probe-detects-fault" in out["second"]["failed_rules"]
    assert out["status"] == "flaky" and code == 1
    block = yaml.safe_load((ws.catalog_dir / "minishop" / f"{fault}.yaml").read_text())["validation"]
    assert block["verdict"] == "flaky" and block["window_s"] == 8.0
    assert block["stability"]["verdict"] == "rejected" and block["stability"]["window_s"] == 2.0
    assert block["stability"]["bundle_digest"] != block["bundle_digest"]
    assert not (ws.state_dir / "journal.json").exists()

    build = run_cli("catalog", "build", "--version", "1.0.0", "--json", cwd=ws.root, env=shop.env_for(ws))
    release = json.loads((ws.root / json.loads(build.stdout)["path"]).read_text())
    assert release["entries"] == []
    [excluded] = release["excluded"]
    assert excluded["id"] == fault and excluded["reason"] == "flaky"
    assert excluded["detail"].startswith("flaky: admitted at 8s, rejected at 2s")
