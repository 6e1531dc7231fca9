"""What the fake platform adds to the contract, and what the pure tests rest on: the behaviour table
decides every effect, a rollout replaces every instance, two processes share one state file."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from faultkit.errors import NotReady, PlatformError
from faultkit.platforms.base import Platform
from faultkit.workspace import Workspace
from tests.fakes.behaviour import ActionOn, Behaviour, BuildHas, Setting
from tests.fakes.platform import FakePlatform
from tests.validators import shop

PORT = Setting("cart", "cart", "env.CARTSTORE_ADDR")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return shop.make_workspace(tmp_path / "shop")


def errors_of(platform: FakePlatform, service: str) -> float:
    return sum((c or {}).get("500", 0.0) for c in platform.request_counts(service).values())


def test_it_is_a_platform_and_a_setting_has_no_effect_unless_the_table_says(ws: Workspace) -> None:
    quiet = FakePlatform(ws)
    assert isinstance(quiet, Platform)
    quiet.up("minishop")
    quiet.patch_field("cart", "cart", "env.CARTSTORE_ADDR", "cartstore:6380")
    assert errors_of(quiet, "cart") == 0 and quiet.ready("cart")
    quiet.down()
    assert not quiet.is_up()


def test_a_setting_away_from_its_manifest_value_has_the_effect_until_restored(ws: Workspace) -> None:
    p = FakePlatform(ws, behaviours=[Behaviour(PORT, "cart", errors=1.0, log="cart store request failed"),
                                     Behaviour(PORT, "frontend", errors=1.0, path="/cart")])
    p.up("minishop")
    p.patch_field("cart", "cart", "env.CARTSTORE_ADDR", "cartstore:6380")
    base = p.endpoint("frontend")
    assert requests.get(base + "/cart?user=probe", timeout=5).status_code == 500
    assert requests.get(base + "/", timeout=5).status_code == 200  # the rest of the shop serves
    assert any(r.message == "cart store request failed" for r in p.logs("cart", 0))
    p.patch_field("cart", "cart", "env.CARTSTORE_ADDR", "cartstore:6379")
    assert requests.get(base + "/cart?user=probe", timeout=5).status_code == 200
    p.down()


def test_a_rollout_replaces_every_instance_and_a_build_that_never_gets_ready_is_rolled_back(ws: Workspace) -> None:
    marker = "# never ready"
    p = FakePlatform(ws, behaviours=[Behaviour(BuildHas("email", marker), "email", unready=True)])
    p.up("minishop")
    [old] = p.instances("email")
    src = Path(ws.apps_dir / "minishop" / "src")
    (src / "email" / "main.py").write_text((src / "email" / "main.py").read_text() + f"\n{marker}\n")
    bad = p.build("email")
    assert p.build_contains(bad.id, marker) and not p.build_contains(old.build, marker)
    with pytest.raises(NotReady, match="rolled back"):
        p.rollout("email", bad.id)
    assert [(i.id, i.build) for i in p.instances("email")] == [(old.id, old.build)]
    p.rollout("email", old.build)  # the same build again: still a full replacement
    [new] = p.instances("email")
    assert new.id != old.id and new.build == old.build and new.ready
    with pytest.raises(PlatformError, match="no build"):
        p.rollout("email", "sha256:" + "0" * 64)
    p.down()


def test_two_platforms_on_one_state_file_see_each_others_changes(ws: Workspace) -> None:
    state = ws.state_dir / "fake.json"
    one = FakePlatform(ws, state_file=state,
                       behaviours=[Behaviour(ActionOn("instance-failure", "cartstore"), "cartstore", unready=True)])
    one.up("minishop")
    other = FakePlatform(ws, state_file=state)
    handle = one.start_action("instance-failure", "cartstore", {}, "all")
    assert other.active_actions() == [handle] and not other.ready("cartstore")
    assert other.request_counts("cartstore") == {i.id: None for i in other.instances("cartstore")}
    other.stop_action(handle)
    assert one.active_actions() == [] and one.ready("cartstore")
    assert one.target() == other.target()
    one.down()


def test_a_behaviour_with_a_share_outside_0_and_1_is_refused() -> None:
    with pytest.raises(ValueError, match="errors 1.5"):
        Behaviour(PORT, "cart", errors=1.5)
