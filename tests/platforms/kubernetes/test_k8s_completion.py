"""The rollout completion predicate on objects recorded from the one-node cluster during a real
rollout of productcatalog (recorded/*.json, written by test_k8s_rollout.py with
FAULTKIT_RECORD_ROLLOUT=1; see recording.py), and on variations of them that each break one rule.
The live side is in test_k8s_rollout.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from faultkit.platforms.kubernetes.completion import current_replicaset, rollout_progress
from faultkit.platforms.kubernetes.images import ExpectedImage

RECORDED = Path(__file__).parent / "recorded"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RECORDED / name).read_text())
    return data


def rolled_out() -> str:
    """The image the recorded rollout set: the template's once it completed."""
    return str(load("complete.json")["deployment"]["spec"]["template"]["spec"]["containers"][0]["image"])


def judge(o: dict[str, Any], ref: str | None = None) -> Any:
    return rollout_progress(o["deployment"], o["replicasets"], o["pods"], o["slices"], o["container"],
                            ExpectedImage(ref or rolled_out(), frozenset(o["image_ids"])))


def test_the_completed_rollout_is_done() -> None:
    p = judge(load("complete.json"))
    assert p.done and p.failed is None and p.waiting == ()


@pytest.mark.parametrize("name", sorted(f.name for f in RECORDED.glob("midway-*.json")))
def test_every_recorded_moment_before_completion_is_not_done(name: str) -> None:
    p = judge(load(name))
    assert not p.done and p.waiting, name


def _old_pod(o: dict[str, Any], terminating: bool) -> dict[str, Any]:
    dep_uid = o["deployment"]["metadata"]["uid"]
    current = current_replicaset(o["deployment"], o["replicasets"])
    assert current is not None
    old_rs = next(r for r in o["replicasets"] if r["metadata"]["uid"] != current["metadata"]["uid"]
                  and any(ref["uid"] == dep_uid for ref in r["metadata"]["ownerReferences"]))
    pod = copy.deepcopy(o["pods"][0])
    pod["metadata"]["name"] = "productcatalog-old-xyz"
    pod["metadata"]["uid"] = "0000-old"
    pod["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": old_rs["metadata"]["name"],
                                           "uid": old_rs["metadata"]["uid"]}]
    if terminating:
        pod["metadata"]["deletionTimestamp"] = "2026-12-01T08:00:00Z"
    return pod


@pytest.mark.parametrize("terminating", [False, True])
def test_a_pod_of_an_older_replicaset_keeps_it_pending(terminating: bool) -> None:
    o = load("complete.json")
    o["pods"].append(_old_pod(o, terminating))
    p = judge(o)
    assert not p.done
    assert any("older ReplicaSet" in w and ("terminating" if terminating else "running") in w for w in p.waiting)


def test_an_endpointslice_listing_another_pod_keeps_it_pending() -> None:
    o = load("complete.json")
    ep = copy.deepcopy(o["slices"][0]["endpoints"][0])
    ep["targetRef"]["name"] = "productcatalog-old-xyz"
    o["slices"][0]["endpoints"].append(ep)
    p = judge(o)
    assert not p.done and any("still lists pod productcatalog-old-xyz" in w for w in p.waiting)


def test_a_new_pod_missing_from_the_endpoints_keeps_it_pending() -> None:
    o = load("complete.json")
    o["slices"][0]["endpoints"] = []
    assert not judge(o).done


def test_a_pod_running_another_image_keeps_it_pending() -> None:
    o = load("complete.json")
    o["image_ids"] = ["sha256:" + "0" * 64]
    p = judge(o, ref="minishop/productcatalog:1.0.0-000000000000")
    assert not p.done and any("runs image" in w for w in p.waiting)


def test_a_pod_reporting_the_reference_by_a_digest_not_yet_known_runs_it() -> None:
    """kind's loader: the kubelet reports a repository digest the node's image list shows only later."""
    o = load("complete.json")
    o["image_ids"] = ["sha256:" + "0" * 64]
    assert judge(o).done
    o["pods"][0]["status"]["containerStatuses"][0]["imageID"] = ""  # not started: no image yet
    assert not judge(o).done


def test_an_unobserved_generation_keeps_it_pending() -> None:
    o = load("complete.json")
    o["deployment"]["metadata"]["generation"] = o["deployment"]["status"]["observedGeneration"] + 1
    assert not judge(o).done


def test_a_progress_deadline_is_a_failure() -> None:
    o = load("complete.json")
    o["deployment"]["status"]["conditions"].append({"type": "Progressing", "status": "False",
                                                    "reason": "ProgressDeadlineExceeded", "message": "too slow"})
    p = judge(o)
    assert p.failed and "too slow" in p.failed


def _crash_looping(o: dict[str, Any]) -> None:
    st = o["pods"][0]["status"]["containerStatuses"][0]
    st["restartCount"] = 4
    st["ready"] = False
    st["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting"}}
    st["lastState"] = {"terminated": {"exitCode": 3, "reason": "Error"}}
    o["deployment"]["status"]["availableReplicas"] = 0  # as the controller then counts it


def test_a_crash_looping_pod_is_waited_for_and_its_exit_said_first() -> None:
    # it may yet come up (Bank of Anthos' services exit until their databases answer), so it is no
    # failure; but a timeout's message names the exit before the replicas missing
    o = load("complete.json")
    _crash_looping(o)
    name = o["pods"][0]["metadata"]["name"]
    p = judge(o)
    assert not p.done and p.failed is None
    assert p.waiting[0] == f"pod {name}: container {o['container']} exited 3 (Error), 4 restarts"
    assert "replicas available" in p.waiting[1]  # what keeps it pending is the replica count, as before


def test_a_container_restarted_once_and_ready_again_leaves_a_complete_rollout_done() -> None:
    o = load("complete.json")
    st = o["pods"][0]["status"]["containerStatuses"][0]
    st["restartCount"] = 1  # killed once (an instance-kill fault), serving again
    st["lastState"] = {"terminated": {"exitCode": 137, "reason": "Error"}}
    p = judge(o)
    assert p.done and p.waiting == ()


def test_a_progress_deadline_names_the_crashing_container() -> None:
    o = load("complete.json")
    _crash_looping(o)
    o["deployment"]["status"]["conditions"].append({"type": "Progressing", "status": "False",
                                                    "reason": "ProgressDeadlineExceeded", "message": "too slow"})
    p = judge(o)
    assert p.failed and p.failed.endswith("too slow; pod " + o["pods"][0]["metadata"]["name"]
                                          + f": container {o['container']} exited 3 (Error), 4 restarts")


def test_an_image_the_node_cannot_get_is_a_failure() -> None:
    o = load("complete.json")
    st = o["pods"][0]["status"]["containerStatuses"][0]
    st["state"] = {"waiting": {"reason": "ErrImageNeverPull", "message": "not present"}}
    p = judge(o)
    assert p.failed and "ErrImageNeverPull" in p.failed
