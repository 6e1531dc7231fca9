"""`catalog export --format chaos-mesh`: the shipped direct faults as Chaos Mesh objects, checked
field by field against the entries and the manifests they select from."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from faultkit.catalog.chaos_mesh import chaos_mesh, chaos_object, duration_text
from faultkit.catalog.model import entry_from_data
from faultkit.commands.release_cmds import custody
from faultkit.workspace import Workspace
from tests.helpers.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
KINDS = {"instance-kill": "PodChaos", "instance-failure": "PodChaos", "network-delay": "NetworkChaos",
         "network-loss": "NetworkChaos", "cpu-stress": "StressChaos", "memory-stress": "StressChaos"}


@pytest.fixture(scope="module")
def repo() -> Workspace:
    return Workspace(root=REPO, state_dir=REPO / ".faultkit")


def entries() -> dict[str, dict]:
    out = {}
    for p in sorted((REPO / "catalog" / "minishop").glob("*.yaml")):
        data = yaml.safe_load(p.read_text())
        if data["mechanism"] == "direct":
            out[data["id"]] = data
    return out


def match_labels(workload: str) -> dict[str, str]:
    docs = yaml.safe_load_all((REPO / "apps" / "minishop" / "manifests" / f"{workload}.yaml").read_text())
    doc = next(d for d in docs if d and d["kind"] == "Deployment" and d["metadata"]["name"] == workload)
    return doc["spec"]["selector"]["matchLabels"]


def test_every_shipped_direct_fault_becomes_its_chaos_mesh_object(repo):
    objects, skipped = chaos_mesh(repo, custody(repo, ()), "shop")
    # Bank of Anthos' pods are selected by the labels in the user's copy of upstream's manifests: without
    # one (CI's checkout) its direct faults are skipped, saying so
    assert all(n.id.startswith("bankofanthos-") and "no copy is in apps/bankofanthos/manifests" in n.reason
               for n in skipped), skipped
    objects = [o for o in objects if o["metadata"]["name"].startswith("minishop-")]
    direct = entries()
    released = [i for i, e in direct.items() if e["validation"]["verdict"] == "admitted"]  # flaky ones stay out
    assert sorted(o["metadata"]["name"] for o in objects) == sorted(released)
    for obj in objects:
        e = direct[obj["metadata"]["name"]]
        action, params, spec = e["direct"]["action"], e["direct"].get("params", {}), obj["spec"]
        assert obj["apiVersion"] == "chaos-mesh.org/v1alpha1" and obj["kind"] == KINDS[action]
        assert obj["metadata"]["namespace"] == "shop" and obj["metadata"]["annotations"]["faultkit/fault"] == e["id"]
        assert spec["selector"] == {"namespaces": ["shop"], "labelSelectors": match_labels(e["target"]["workload"])}
        assert spec["mode"] == {"pod": "one", "service": "all"}[e["level"]]
        assert spec["duration"] == duration_text(e["validation"]["window_s"])
        if action == "instance-failure":
            assert spec["action"] == "pod-failure"
        elif action == "network-delay":
            assert spec["action"] == "delay" and spec["delay"] == {"latency": f"{params['ms']}ms"}
            assert spec["direction"] == "to"
        elif action == "network-loss":
            assert spec["action"] == "loss" and spec["loss"] == {"loss": str(params["percent"])}
        elif action == "cpu-stress":
            assert spec["stressors"] == {"cpu": {"workers": params["workers"]}}
            assert spec["containerNames"] == [e["target"]["container"]]
    assert {o["kind"] for o in objects} == {"PodChaos", "NetworkChaos", "StressChaos"}


def test_kill_memory_and_actions_without_equivalent(repo):
    base = entries()["minishop-cart-cpu-stress"]
    kill = chaos_object(entry_from_data({**base, "direct": {"action": "instance-kill", "params": {}}}), repo,
                        "default", None)
    assert kill["kind"] == "PodChaos" and kill["spec"]["action"] == "pod-kill" and "duration" not in kill["spec"]
    memory = chaos_object(entry_from_data({**base, "level": "service",
                                           "direct": {"action": "memory-stress", "params": {"mb": 300}}}),
                          repo, "default", 90)
    assert memory["spec"]["stressors"] == {"memory": {"workers": 1, "size": "300MB"}}
    assert memory["spec"]["mode"] == "all" and memory["spec"]["duration"] == "1m30s"
    for action in ("dns-error", "disk-fill", "io-delay"):
        with pytest.raises(KeyError):
            chaos_object(entry_from_data({**base, "direct": {"action": action, "params": {}}}), repo, "default", None)
    with pytest.raises(KeyError, match="node-level"):
        chaos_object(entry_from_data({**base, "level": "node"}), repo, "default", None)


def test_export_command_writes_a_list_for_kubectl(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "FAULTKIT_ROOT"}
    out = tmp_path / "chaos.json"
    proc = run_cli("catalog", "export", "--format", "chaos-mesh", "--namespace", "shop", "--duration", "2m",
                   "--out", str(out), cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    minishop = [i for i in doc["items"] if i["metadata"]["name"].startswith("minishop-")]
    assert doc["apiVersion"] == "v1" and doc["kind"] == "List" and len(minishop) == 16  # the released direct faults
    assert {i["spec"]["duration"] for i in doc["items"]} == {"2m"}
    proc = run_cli("catalog", "export", "--format", "chaos-mesh", "--namespace", "Bad_NS", cwd=REPO, env=env,
                   timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith("Error: --namespace 'Bad_NS'")
