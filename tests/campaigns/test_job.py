"""The campaign as a Kubernetes Indexed Job, checked structurally (test_campaign_job.py runs it on
the one-node cluster)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from faultkit.campaigns import job, timing
from faultkit.campaigns.plan import Plan, new_plan
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
SHIPPED = Workspace(root=REPO, state_dir=REPO / ".faultkit")


def shipped_plan(workers: int) -> Plan:
    return new_plan(SHIPPED, "minishop", (), True, None, workers=workers, platform="kubernetes", window_s=300,
                    interval_s=2, repeat=2, attempts=3, max_load=None, overheads=timing.measure([REPO / "evidence"]))


def by_kind(listing: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for item in listing["items"]:
        out.setdefault(item["kind"], []).append(item)
    return out


def test_every_fault_is_in_exactly_one_balanced_share():
    plan = shipped_plan(3)
    parts = job.shares(plan, 3)
    ids = [f.id for part in parts for f in part]
    assert sorted(ids) == sorted(f.id for f in plan.faults)
    totals = [sum(f.expected_s for f in part) for part in parts]
    assert max(totals) - min(totals) <= max(f.expected_s for f in plan.faults)


def test_the_job_gives_each_index_its_namespace_and_its_share():
    plan = shipped_plan(2)
    kinds = by_kind(job.render(plan, "fk", "faultkit:dev", 2))
    job_obj = kinds["Job"][0]
    assert job_obj["apiVersion"] == "batch/v1"
    spec = job_obj["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 2, 2)
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never" and pod["serviceAccountName"] == job.SERVICE_ACCOUNT
    script = pod["containers"][0]["command"][2]
    assert 'faultkit.cli campaign run --resume "$d"' in script and 'FAULTKIT_CONFIG_DIR="$d/key"' in script
    claims = {v["name"]: v for v in pod["volumes"]}
    assert claims["evidence"]["persistentVolumeClaim"]["claimName"] == kinds["PersistentVolumeClaim"][0]["metadata"][
        "name"]
    assert claims["plans"]["configMap"]["name"] == kinds["ConfigMap"][0]["metadata"]["name"]
    # each index's plan: one worker, its share of the faults, the same protocol parameters
    data = kinds["ConfigMap"][0]["data"]
    shares = [json.loads(data[f"plan-{k}.json"]) for k in (0, 1)]
    assert all(s["workers"] == 1 and s["platform"] == "kubernetes" and s["window_s"] == 300 for s in shares)
    assert [s["namespaces"] for s in shares] == [["fk-0"], ["fk-1"]]
    assert sorted(f["id"] for s in shares for f in s["faults"]) == sorted(f.id for f in plan.faults)
    assert {n["metadata"]["name"] for n in kinds["Namespace"]} == {"fk", "fk-0", "fk-1"}


def test_the_service_account_acts_only_in_the_instance_namespaces():
    kinds = by_kind(job.render(shipped_plan(2), "fk", "faultkit:dev", 2))
    assert "ClusterRole" not in kinds and "ClusterRoleBinding" not in kinds
    assert sorted(r["metadata"]["namespace"] for r in kinds["Role"]) == ["fk-0", "fk-1"]
    for binding in kinds["RoleBinding"]:
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": job.SERVICE_ACCOUNT}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": job.SERVICE_ACCOUNT, "namespace": "fk"}]
    for role in kinds["Role"]:
        resources = {r for rule in role["rules"] for r in rule["resources"]}
        assert "secrets" not in resources
        # its own Namespace object, read only (the uid the platform records), and no other
        own = [rule for rule in role["rules"] if "namespaces" in rule["resources"]]
        mine = [role["metadata"]["namespace"]]
        assert own == [{"apiGroups": [""], "resources": ["namespaces"], "resourceNames": mine, "verbs": ["get"]}]


def test_render_command_writes_one_list(ws, cli):
    for fid in ("minishop-checkout-instance-failure", "minishop-checkout-env-payment-addr-port"):
        shutil.copy(REPO / "catalog" / "minishop" / f"{fid}.yaml", ws.catalog_dir / "minishop")
    out = ws.root / "job.yaml"
    cli("campaign", "render", "--app", "minishop", "--all", "--workers", "2", "--image", "faultkit:dev",
        "--out", str(out), check=0)
    listing = yaml.safe_load(out.read_text())
    assert listing["kind"] == "List" and len(by_kind(listing)["Job"]) == 1
    bad = cli("campaign", "render", "--app", "minishop", "--all", "--workers", "2", "--image", "x", "--name", "Bad_",
              check=2)
    assert bad.stderr.startswith("Error: --name 'Bad_': use lowercase letters")
