"""A sample of the shipped minishop catalog, validated end to end on every CI run.

Two admitted faults per mechanism go through the real command, `faultkit validate`, with the
protocol's repeat of 2 and 10 s windows, and each bundle is judged again offline. The entries and
patches are the committed ones (their recorded verdicts stripped) in a throwaway workspace, so the
run writes nothing into the repository. The sample holds faults whose symptom is certain rather
than drawn: a 50% connection loss, admitted with 10 s windows, came out flaky at 8 s when every
probe of one cycle happened to get through; checkout's instance failure, whose errors are the load
generator's few checkouts (16.6 a minute in an 8 s window is two of them), came out flaky when a
cycle drew none. Cart's instance failure leaves 70 to 300 errors a minute. For the same reason the
config pair no longer holds checkout's payment port: its errors are the workload's checkouts alone,
and one CI cycle counted none (its after window's 34 frontend 5xx were all the probe's 34 attempts),
while the frontend's recommendation port fails every home and product page. The code pair gave up
checkout's shipping quote for the same reason (20 to 65 errors a minute in its admitted bundles; a CI
cycle at 8 s fell below the bound): productcatalog's list pages fail every home page (270 to 390).
The windows are 10 s, the shortest every sampled fault was admitted at, no longer 8 s: at 8 s the
recommendation port's keeps-serving, 1.57 to 2.14 times its bound in four quiet runs here, fell
below it in one CI cycle while the cluster came up beside this tier.

Validations here run under the default rules (v5; as v4 for the counts), which take every request of the symptom probe
off the counted traffic: under v3 the probe's passing requests were a third of the frontend's
before rate at 8 s windows, and the cart password fault's keeps-serving (at 1.3 times its bound)
failed a cycle in CI; under v4 it measures twice its bound.
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

pytestmark = pytest.mark.live

SAMPLE = {
    "code": ("minishop-code-productcatalog-list-pages", "minishop-code-cart-store-acl-auth"),
    "config": ("minishop-frontend-env-recommendation-addr-port", "minishop-cart-env-cartstore-password"),
    "direct": ("minishop-cart-instance-failure", "minishop-cartstore-instance-failure"),
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
    proc = retrying.run(lambda: faultkit(ws, "validate", "--fault", fault_id, "--window", "10s", "--interval", "1s",
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
    # every request of every probe attempt is on record, as the rules take each one off the counts
    bundle = ws.root / verdict["bundle"]
    steps = 1 + len(json.loads((bundle / "inputs.json").read_text())["entry"]["probe"].get("setup", []))
    attempts = [a for w in sorted((bundle / "windows").glob("*.json")) for a in json.loads(w.read_text())["probes"]]
    assert attempts and all(len(a["statuses"]) == steps or a["statuses"][-1] is None for a in attempts)


def test_sample_covers_every_mechanism_with_two_faults():
    for mechanism, ids in SAMPLE.items():
        assert len(set(ids)) == 2
        for fault_id in ids:
            entry = (shop.REPO / "catalog" / "minishop" / f"{fault_id}.yaml").read_text()
            assert f"mechanism: {mechanism}" in entry
            assert "verdict: admitted" in entry
