"""Bank of Anthos' live path, as its walkthrough in the README runs it: the user's checkout's
manifests and source into a copy of this repository, its images built, the app up on the one-node
cluster with the telemetry stack, and one of its catalog's faults validated there and judged again
from its bundle alone.

`long`: it needs a checkout of GoogleCloudPlatform/bank-of-anthos at v0.6.7, which no CI machine
has (nothing of its source is in this repository), and about 15 minutes on 2 cores (nine images,
three JVMs). Run it with the checkout named, the cluster and the stack up:

    FAULTKIT_BANKOFANTHOS=../bank-of-anthos pytest -m long tests/apps/test_bankofanthos_live.py

The shipped catalog's bundles are judged again in every CI run without it
(tests/validators/test_judge_golden.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.cli import REPO, cli_env, run_cli

pytestmark = [pytest.mark.long, pytest.mark.live, pytest.mark.exclusive]

FAULT = "bankofanthos-service-balancereader-ports-http-target-port"
NAMESPACE = "boa-long"
EDITED = {"balance-reader.yaml", "contacts.yaml", "frontend.yaml", "ledger-writer.yaml", "transaction-history.yaml",
          "userservice.yaml"}


def _checkout() -> Path:
    named = os.environ.get("FAULTKIT_BANKOFANTHOS")
    if not named or not (Path(named) / "kubernetes-manifests").is_dir():
        pytest.fail("set FAULTKIT_BANKOFANTHOS to a checkout of bank-of-anthos at v0.6.7", pytrace=False)
    return Path(named).resolve()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A clone of this repository with the user's manifests (tracing and metrics exports to Google
    Cloud switched off, as the walkthrough says) and a link to the user's source."""
    checkout = _checkout()
    root = tmp_path_factory.mktemp("boa") / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO), str(root)], check=True)
    app = root / "apps" / "bankofanthos"
    (app / "manifests").mkdir()
    for f in [*(checkout / "kubernetes-manifests").glob("*.yaml"), checkout / "extras" / "jwt" / "jwt-secret.yaml"]:
        text = f.read_text()
        text = re.sub(r'(- name: ENABLE_(?:TRACING|METRICS)\n\s+value: )"true"', r'\1"false"', text)
        (app / "manifests" / f.name).write_text(text)
    (app / "src").symlink_to(checkout / "src")
    yield root
    run_cli("down", "--platform", "kubernetes", "--namespace", NAMESPACE, cwd=root, timeout=300)


def test_a_fault_of_the_catalog_is_admitted_on_the_cluster_and_judged_alike(repo: Path) -> None:
    env = cli_env()
    for needed in ("KUBECONFIG", "FAULTKIT_PROMETHEUS", "FAULTKIT_OTLP_ENDPOINT"):
        if not env.get(needed):
            pytest.fail(f"{needed} is not set: eval \"$(tools/cluster/cluster env)\" and "
                        "\"$(tools/telemetry/telemetry cluster env)\" first", pytrace=False)
    verify = run_cli("apps", "verify", "bankofanthos", "--manifests", "apps/bankofanthos/manifests", cwd=repo)
    differ = {line.split()[1] for line in verify.stdout.splitlines() if line.startswith("different")}
    assert verify.returncode == 1 and differ == EDITED, verify.stdout  # only the files the walkthrough edits
    run_cli("build", "--app", "bankofanthos", cwd=repo, check=0, timeout=1800)
    run_cli("up", "--platform", "kubernetes", "--app", "bankofanthos", "--namespace", NAMESPACE,
            "--load", f"{REPO}/tools/cluster/cluster load", "--timeout", "900", cwd=repo, check=0, timeout=1200)
    evidence = repo / "ev"
    done = run_cli("validate", "--fault", FAULT, "--platform", "kubernetes", "--namespace", NAMESPACE,
                   "--window", "10s", "--interval", "1s", "--no-record", "--evidence", str(evidence),
                   cwd=repo, timeout=900)
    assert done.returncode == 0 and f"{FAULT}: admitted" in done.stdout, done.stdout[-3000:] + done.stderr
    bundle = next(evidence.iterdir())
    judged = run_cli("judge", str(bundle), cwd=repo)  # signed with the user's own key, which judge trusts
    assert judged.returncode == 0, judged.stdout + judged.stderr
    shutil.rmtree(evidence)
