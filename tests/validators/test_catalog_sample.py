"""A sample of the shipped minishop catalog, validated end to end on every CI run.

Two admitted faults per mechanism go through the real command, `faultkit validate`, with the
protocol's repeat of 2 and 8 s windows, and each bundle is judged again offline. The entries and
patches are the committed ones (their recorded verdicts stripped) in a throwaway workspace, so the
run writes nothing into the repository. The sample holds faults whose symptom is certain rather
than drawn: a 50% connection loss, admitted with 10 s windows, came out flaky at 8 s when every
probe of one cycle happened to get through.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from faultkit.workspace import Workspace
from tests.helpers import retrying
from tests.helpers.cli import run_cli
from tests.validators import shop

SAMPLE = {
    "code": ("minishop-code-checkout-shipping-quote", "minishop-code-cart-store-acl-auth"),
    "config": ("minishop-checkout-env-payment-addr-port", "minishop-cart-env-cartstore-password"),
    "direct": ("minishop-checkout-instance-failure", "minishop-cartstore-instance-failure"),
}


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    with shop.running(tmp_path_factory.mktemp("sample")) as (ws, _):
        yield ws


def faultkit(ws: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=ws.root, env=shop.env_for(ws), timeout=600)


@pytest.mark.parametrize("fault_id", [f for pair in SAMPLE.values() for f in pair])
def test_sampled_catalog_fault_is_admitted_again(running, fault_id):
    ws = running
    shop.from_catalog(ws, fault_id)
    proc = retrying.run(lambda: faultkit(ws, "validate", "--fault", fault_id, "--window", "8s", "--interval", "1s",
                                         "--repeat", "2", "--no-record", "--json"))
    assert proc.stdout, proc.stderr[-2000:]
    verdict = json.loads(proc.stdout)
    assert verdict["status"] == "admitted", verdict["summary"]
    assert proc.returncode == 0
    assert len(verdict["cycles"]) == 2
    # the sealed bundle alone gives the same verdict
    judged = faultkit(ws, "judge", verdict["bundle"])
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert not (ws.state_dir / "journal.json").exists()


def test_sample_covers_every_mechanism_with_two_faults():
    for mechanism, ids in SAMPLE.items():
        assert len(set(ids)) == 2
        for fault_id in ids:
            entry = (shop.REPO / "catalog" / "minishop" / f"{fault_id}.yaml").read_text()
            assert f"mechanism: {mechanism}" in entry
            assert "verdict: admitted" in entry
