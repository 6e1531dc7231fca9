"""The build stage of a code fault on a platform that builds images (the kubernetes platform): the
service's lint and unit tests run in the image, with the image's own dependencies, never on this
machine, where an upstream service's packages are not installed (Bank of Anthos' contacts imports
SQLAlchemy 1.4, which faultkit does not); a failure there is the fault's rejection, with the failing
test named. The fake platform stands in for the image build; what is tested is the stage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from faultkit.errors import CheckFailed
from faultkit.observe.load import Limits
from faultkit.platforms.base import Build
from faultkit.validators.params import ValidationParams
from faultkit.validators.pipeline import validate
from faultkit.workspace import Workspace
from tests.fakes.behaviour import Behaviour, BuildHas
from tests.fakes.platform import FakePlatform
from tests.validators import shop

MARKER = '["options"][0]["price"]'
BEHAVIOURS = [Behaviour(BuildHas("checkout", MARKER), "checkout", errors=1.0, log="unhandled error: KeyError")]
FAILING = "tests/test_checkout.py::test_place_order_happy_path"
PARAMS = ValidationParams(window_s=2, interval_s=0.5, repeat=1, limits=Limits(max_load_per_core=1000))


class ImageBuilds(FakePlatform):
    """The fake, building as an image platform does: the checks run inside build(), which raises
    CheckFailed when they fail (images/ci.py on the kubernetes platform)."""

    checks_in_build = True

    def __init__(self, *args, tests_pass: bool, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.tests_pass = tests_pass

    def build(self, service: str, source_root: str | None = None) -> Build:
        if source_root is not None and not self.tests_pass:  # the patched tree; `up` builds the pinned one
            raise CheckFailed(service, "unit tests", (FAILING,), f"FAILED {FAILING} - KeyError: 'options'\n1 failed")
        return super().build(service, source_root)


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    ws = shop.make_workspace(tmp_path / "shop")
    # a test command that cannot pass on this machine: only a platform that runs it here would fail on it
    app_yaml = ws.apps_dir / "minishop" / "app.yaml"
    full = "  test: [python3, -m, pytest, -q, -p, no:cacheprovider, tests]\n"
    assert full in app_yaml.read_text()
    app_yaml.write_text(app_yaml.read_text().replace(full, "  test: [python3, -c, 'raise SystemExit(3)']\n"))
    yield ws


def _build_stage(folder: Path) -> dict:
    return next(s for s in json.loads((folder / "stages.json").read_text())["stages"] if s["stage"] == "build")


def test_the_checks_run_in_the_image_not_on_this_machine(workspace: Workspace, tmp_path: Path) -> None:
    platform = ImageBuilds(workspace, behaviours=BEHAVIOURS, tests_pass=True)
    platform.up("minishop")
    try:
        verdict, folder = validate(workspace, platform, shop.checkout_shipping_field(workspace), PARAMS,
                                   evidence=tmp_path / "evidence", record=False)
    finally:
        platform.down()
    assert _build_stage(folder)["status"] == "ok"
    assert "service-lint-and-tests-pass" not in {r["rule"] for r in verdict["rules"] if not r["passed"]}


def test_a_check_failing_in_the_image_rejects_the_fault_naming_the_test(workspace: Workspace, tmp_path: Path) -> None:
    platform = ImageBuilds(workspace, behaviours=BEHAVIOURS, tests_pass=False)
    platform.up("minishop")
    try:
        before = {i.id: i.build for i in platform.instances()}
        verdict, folder = validate(workspace, platform, shop.checkout_shipping_field(workspace), PARAMS,
                                   evidence=tmp_path / "evidence", record=False)
        assert {i.id: i.build for i in platform.instances()} == before  # nothing was rolled out
    finally:
        platform.down()
    assert verdict["status"] == "rejected"
    assert {r["rule"] for r in verdict["rules"] if not r["passed"]} == {"service-lint-and-tests-pass"}
    rule = next(r for r in verdict["rules"] if r["rule"] == "service-lint-and-tests-pass")
    assert rule["measured"] == "unit tests failed" and FAILING in rule["detail"]
    assert _build_stage(folder)["status"] == "failed"
