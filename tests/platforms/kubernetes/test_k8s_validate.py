"""`validate` on the cluster: a config fault from the shipped catalog, short windows, and `judge`
recomputing the same verdict from the bundle offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client

from faultkit.platforms.kubernetes import KubernetesPlatform
from faultkit.validators.judge import verify_and_judge
from faultkit.validators.params import ValidationParams
from tests.helpers.retrying import validate

pytestmark = [pytest.mark.live, pytest.mark.exclusive]

FAULT = "minishop-checkout-env-payment-addr-port"


def test_a_config_fault_is_admitted_on_the_cluster_and_judged_alike(shop: KubernetesPlatform, tmp_path: Path,
                                                                     apps_api: client.AppsV1Api) -> None:
    ns = shop.record().namespace
    env_before = apps_api.read_namespaced_deployment("checkout", ns).spec.template.spec.containers[0].env
    verdict, folder = validate(shop.workspace, shop, FAULT, ValidationParams(window_s=12, interval_s=2.0, repeat=1),
                               evidence=tmp_path / "evidence", record=False)
    assert verdict["status"] == "admitted", verdict["failed_rules"]
    assert json.loads((folder / "inputs.json").read_text())["platform"] == "kubernetes"
    recomputed, same = verify_and_judge(folder)
    assert same and recomputed["status"] == "admitted"
    # nothing left changed: the journal is closed and the Deployment is as it was
    assert not (shop.workspace.state_dir / "journal.json").exists()
    env_after = apps_api.read_namespaced_deployment("checkout", ns).spec.template.spec.containers[0].env
    assert env_after == env_before
