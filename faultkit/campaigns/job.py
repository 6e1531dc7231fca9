"""A campaign as a Kubernetes Indexed Job, for clusters larger than one machine.

The faults are shared out longest first, each to the share expected to finish soonest (the rule
the local queue follows, fixed in advance because the Job's pods share no queue). Index k is a
one-worker campaign of its own: it copies its share's plan from a ConfigMap to the evidence volume
(unless a restarted pod finds it there), then runs `faultkit campaign run --resume` on it against
namespace <name>-<k>, so a pod the Job restarts continues its share instead of starting over. The
service account may act only in the instance namespaces, through a Role and RoleBinding in each;
nothing is cluster-wide.

Not run on a cluster yet: the kubernetes platform the pods would validate on is not part of this
release; the objects are checked structurally (tests/campaigns/test_job.py).
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from typing import Any

from kubernetes import client

from faultkit.campaigns.plan import Plan, PlannedFault

SERVICE_ACCOUNT = "faultkit-campaign"
LABEL = "faultkit/campaign"
VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"]
# what the kubernetes platform manages in an instance namespace: the app's objects, their pods'
# logs and exec (for direct actions), and the events readiness is read from
RULES = [
    client.V1PolicyRule(api_groups=[""], resources=["pods", "pods/log", "pods/exec", "services", "endpoints",
                                                    "configmaps", "events"], verbs=VERBS),
    client.V1PolicyRule(api_groups=["apps"], resources=["deployments", "replicasets", "statefulsets", "daemonsets"],
                        verbs=VERBS),
]


def shares(plan: Plan, n: int) -> list[list[PlannedFault]]:
    """The plan's faults in n shares: longest first, each to the share with the least expected time."""
    heap = [(0.0, k) for k in range(n)]
    out: list[list[PlannedFault]] = [[] for _ in range(n)]
    for f in sorted(plan.faults, key=lambda f: (-f.expected_s, f.id)):
        total, k = heapq.heappop(heap)
        out[k].append(f)
        heapq.heappush(heap, (total + f.expected_s, k))
    return out


def share_plan(plan: Plan, faults: list[PlannedFault]) -> Plan:
    return replace(plan, workers=1, platform="kubernetes", faults=tuple(faults))


def _meta(name: str, namespace: str | None, campaign: str, **labels: str) -> client.V1ObjectMeta:
    return client.V1ObjectMeta(name=name, namespace=namespace,
                               labels={"app.kubernetes.io/managed-by": "faultkit", LABEL: campaign, **labels})


def _pod_command(name: str) -> list[str]:
    script = (
        'set -e; k="$JOB_COMPLETION_INDEX"; d="/evidence/share-$k"; mkdir -p "$d"; '
        '[ -f "$d/plan.json" ] || cp "/plans/plan-$k.json" "$d/plan.json"; '
        f'export FAULTKIT_NAMESPACE="{name}-$k" FAULTKIT_STATE_DIR="$d/state"; '
        'exec faultkit campaign run --resume "$d" --json'
    )
    return ["sh", "-c", script]


def objects(plan: Plan, name: str, image: str, workers: int, storage: str = "20Gi") -> list[Any]:
    parts = shares(plan, workers)
    spaces = [f"{name}-{k}" for k in range(workers)]
    out: list[Any] = [client.V1Namespace(api_version="v1", kind="Namespace", metadata=_meta(name, None, name))]
    out += [client.V1Namespace(api_version="v1", kind="Namespace", metadata=_meta(ns, None, name, **{
        "faultkit/index": str(k)})) for k, ns in enumerate(spaces)]
    out.append(client.V1ServiceAccount(api_version="v1", kind="ServiceAccount",
                                       metadata=_meta(SERVICE_ACCOUNT, name, name)))
    for ns in spaces:
        out.append(client.V1Role(api_version="rbac.authorization.k8s.io/v1", kind="Role",
                                 metadata=_meta(SERVICE_ACCOUNT, ns, name), rules=RULES))
        out.append(client.V1RoleBinding(
            api_version="rbac.authorization.k8s.io/v1", kind="RoleBinding", metadata=_meta(SERVICE_ACCOUNT, ns, name),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=SERVICE_ACCOUNT),
            subjects=[client.RbacV1Subject(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=name)]))
    out.append(client.V1ConfigMap(api_version="v1", kind="ConfigMap", metadata=_meta(f"{name}-plans", name, name),
                                  data={f"plan-{k}.json": share_plan(plan, part).to_json()
                                        for k, part in enumerate(parts)}))
    out.append(client.V1PersistentVolumeClaim(
        api_version="v1", kind="PersistentVolumeClaim", metadata=_meta(f"{name}-evidence", name, name),
        spec=client.V1PersistentVolumeClaimSpec(access_modes=["ReadWriteOnce"],
                                                resources=client.V1VolumeResourceRequirements(
                                                    requests={"storage": storage}))))
    container = client.V1Container(
        name="campaign", image=image, command=_pod_command(name),
        volume_mounts=[client.V1VolumeMount(name="plans", mount_path="/plans", read_only=True),
                       client.V1VolumeMount(name="evidence", mount_path="/evidence")])
    pod = client.V1PodSpec(
        service_account_name=SERVICE_ACCOUNT, restart_policy="Never", containers=[container],
        volumes=[client.V1Volume(name="plans", config_map=client.V1ConfigMapVolumeSource(name=f"{name}-plans")),
                 client.V1Volume(name="evidence", persistent_volume_claim=client.V1PersistentVolumeClaimVolumeSource(
                     claim_name=f"{name}-evidence"))])
    out.append(client.V1Job(
        api_version="batch/v1", kind="Job", metadata=_meta(name, name, name),
        spec=client.V1JobSpec(completion_mode="Indexed", completions=workers, parallelism=workers,
                              backoff_limit_per_index=2, max_failed_indexes=workers,
                              template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(
                                  labels={"app.kubernetes.io/managed-by": "faultkit", LABEL: name}), spec=pod))))
    return out


def render(plan: Plan, name: str, image: str, workers: int, storage: str = "20Gi") -> dict[str, Any]:
    """Every object as one v1 List, as `kubectl apply -f` takes it."""
    api = client.ApiClient()
    items = [api.sanitize_for_serialization(o) for o in objects(plan, name, image, workers, storage)]
    return {"apiVersion": "v1", "kind": "List", "items": items}
