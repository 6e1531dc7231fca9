"""A campaign as a Kubernetes Indexed Job, for clusters larger than one machine.

The faults are shared out longest first, each to the share expected to finish soonest (the rule
the local queue follows, fixed in advance because the Job's pods share no queue). Index k is a
one-worker campaign of its own: it copies its share's plan from a ConfigMap to the evidence volume
(unless a restarted pod finds it there), then runs `faultkit campaign run --resume` on it against
namespace <name>-<k>, so a pod the Job restarts continues its share instead of starting over. The
service account may act only in the instance namespaces, through a Role and RoleBinding in each;
nothing is cluster-wide: the namespaces are made here (the pods bring the app up into them with
`up --existing`), and the app's images are named (`--app-images`) and already on the nodes, so the
pods neither create namespaces nor list nodes nor build. Without an engine in the pod a code fault
cannot be built there: the Job runs config faults (tests/campaigns/test_campaign_job.py runs one).

Evidence: a claim (`storage`) for clusters whose pods land on many nodes, or a folder of the node
(`host_path`) on a one-node cluster, where `faultkit campaign collect` reads it in place. Not an
emptyDir: it dies with the pod, so a restarted index could not resume and nothing is left to collect.
Each index signs with its own key, made on the volume beside its share (key/validator.key.pub is
what `collect --trust` takes).
"""

from __future__ import annotations

import heapq
import json
from dataclasses import dataclass, replace
from typing import Any

from kubernetes import client

from faultkit.campaigns.plan import Plan, PlannedFault
from faultkit.images.toolkit import WORKSPACE  # where the faultkit image holds the repository
from faultkit.platforms.options import KubernetesOptions

SERVICE_ACCOUNT = "faultkit-campaign"
LABEL = "faultkit/campaign"
VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"]
# what the kubernetes platform does in an instance namespace: the app's objects, their pods' logs,
# exec (direct actions), port-forwards (endpoints) and the pod proxy (request counts), endpoint
# slices (a Service's ports in force), scaling old replica sets down, and the events readiness is
# read from; plus reading its own Namespace object (the uid it records), and nothing else of it
RULES = [
    client.V1PolicyRule(api_groups=[""], resources=["pods", "pods/log", "pods/exec", "pods/portforward", "pods/proxy",
                                                    "services", "endpoints", "configmaps", "events"], verbs=VERBS),
    client.V1PolicyRule(api_groups=["apps"], resources=["deployments", "deployments/scale", "replicasets",
                                                        "replicasets/scale", "statefulsets", "daemonsets"],
                        verbs=VERBS),
    client.V1PolicyRule(api_groups=["discovery.k8s.io"], resources=["endpointslices"], verbs=["get", "list", "watch"]),
]


@dataclass(frozen=True)
class Volume:
    storage: str = "20Gi"  # the claim's size
    host_path: str | None = None  # a folder of the node instead of a claim


def shares(plan: Plan, n: int) -> list[list[PlannedFault]]:
    """The plan's faults in n shares: longest first, each to the share with the least expected time."""
    heap = [(0.0, k) for k in range(n)]
    out: list[list[PlannedFault]] = [[] for _ in range(n)]
    for f in sorted(plan.faults, key=lambda f: (-f.expected_s, f.id)):
        total, k = heapq.heappop(heap)
        out[k].append(f)
        heapq.heappush(heap, (total + f.expected_s, k))
    return out


def share_plan(plan: Plan, faults: list[PlannedFault], namespace: str) -> Plan:
    return replace(plan, workers=1, platform=KubernetesOptions.name, faults=tuple(faults), namespaces=(namespace,))


def _rules(namespace: str) -> list[client.V1PolicyRule]:
    own = client.V1PolicyRule(api_groups=[""], resources=["namespaces"], resource_names=[namespace], verbs=["get"])
    return [*RULES, own]


def _meta(name: str, namespace: str | None, campaign: str, **labels: str) -> client.V1ObjectMeta:
    return client.V1ObjectMeta(name=name, namespace=namespace,
                               labels={"app.kubernetes.io/managed-by": "faultkit", LABEL: campaign, **labels})


def _pod_command(prebuilt: bool) -> list[str]:
    script = (
        'set -e; k="$JOB_COMPLETION_INDEX"; d="/evidence/share-$k"; mkdir -p "$d"; '
        '[ -f "$d/plan.json" ] || cp "/plans/plan-$k.json" "$d/plan.json"; '
        'export FAULTKIT_STATE_DIR="$d/state" FAULTKIT_CONFIG_DIR="$d/key"; '
        + ('export FAULTKIT_KUBERNETES_IMAGES=/plans/images.json FAULTKIT_KUBERNETES_EXISTING=1; ' if prebuilt else '')
        # 1 is a finished share with a fault not admitted: the index is done (collect records it); any
        # other failure (a crash, a stop) fails the pod, and the Job's retry resumes the share
        + 'python3 -m faultkit.cli campaign run --resume "$d" --json || [ "$?" -eq 1 ]'
    )
    return ["sh", "-c", script]


def _evidence(name: str, volume: Volume) -> client.V1Volume:
    if volume.host_path:
        return client.V1Volume(name="evidence", host_path=client.V1HostPathVolumeSource(
            path=volume.host_path, type="DirectoryOrCreate"))
    return client.V1Volume(name="evidence", persistent_volume_claim=client.V1PersistentVolumeClaimVolumeSource(
        claim_name=f"{name}-evidence"))


def objects(plan: Plan, name: str, image: str, workers: int, volume: Volume = Volume(),
            app_images: dict[str, str] | None = None) -> list[Any]:
    parts = shares(plan, workers)
    spaces = [f"{name}-{k}" for k in range(workers)]
    out: list[Any] = [client.V1Namespace(api_version="v1", kind="Namespace", metadata=_meta(name, None, name))]
    out += [client.V1Namespace(api_version="v1", kind="Namespace", metadata=_meta(ns, None, name, **{
        "faultkit/index": str(k)})) for k, ns in enumerate(spaces)]
    out.append(client.V1ServiceAccount(api_version="v1", kind="ServiceAccount",
                                       metadata=_meta(SERVICE_ACCOUNT, name, name)))
    for ns in spaces:
        out.append(client.V1Role(api_version="rbac.authorization.k8s.io/v1", kind="Role",
                                 metadata=_meta(SERVICE_ACCOUNT, ns, name), rules=_rules(ns)))
        out.append(client.V1RoleBinding(
            api_version="rbac.authorization.k8s.io/v1", kind="RoleBinding", metadata=_meta(SERVICE_ACCOUNT, ns, name),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=SERVICE_ACCOUNT),
            subjects=[client.RbacV1Subject(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=name)]))
    data = {f"plan-{k}.json": share_plan(plan, part, spaces[k]).to_json() for k, part in enumerate(parts)}
    if app_images is not None:
        data["images.json"] = json.dumps(app_images, indent=1, sort_keys=True) + "\n"
    out.append(client.V1ConfigMap(api_version="v1", kind="ConfigMap", metadata=_meta(f"{name}-plans", name, name),
                                  data=data))
    if not volume.host_path:
        # many nodes: every index's pod mounts the one claim, so it must be shareable
        out.append(client.V1PersistentVolumeClaim(
            api_version="v1", kind="PersistentVolumeClaim", metadata=_meta(f"{name}-evidence", name, name),
            spec=client.V1PersistentVolumeClaimSpec(access_modes=["ReadWriteMany"],
                                                    resources=client.V1VolumeResourceRequirements(
                                                        requests={"storage": volume.storage}))))
    container = client.V1Container(
        name="campaign", image=image, image_pull_policy="IfNotPresent", command=_pod_command(app_images is not None),
        working_dir=WORKSPACE, env=[client.V1EnvVar(name="FAULTKIT_ROOT", value=WORKSPACE)],
        volume_mounts=[client.V1VolumeMount(name="plans", mount_path="/plans", read_only=True),
                       client.V1VolumeMount(name="evidence", mount_path="/evidence")])
    pod = client.V1PodSpec(
        service_account_name=SERVICE_ACCOUNT, restart_policy="Never", containers=[container],
        volumes=[client.V1Volume(name="plans", config_map=client.V1ConfigMapVolumeSource(name=f"{name}-plans")),
                 _evidence(name, volume)])
    out.append(client.V1Job(
        api_version="batch/v1", kind="Job", metadata=_meta(name, name, name),
        spec=client.V1JobSpec(completion_mode="Indexed", completions=workers, parallelism=workers,
                              backoff_limit_per_index=2, max_failed_indexes=workers,
                              template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(
                                  labels={"app.kubernetes.io/managed-by": "faultkit", LABEL: name}), spec=pod))))
    return out


def render(plan: Plan, name: str, image: str, workers: int, volume: Volume = Volume(),
           app_images: dict[str, str] | None = None) -> dict[str, Any]:
    """Every object as one v1 List, as `kubectl apply -f` takes it."""
    api = client.ApiClient()
    items = [api.sanitize_for_serialization(o) for o in objects(plan, name, image, workers, volume, app_images)]
    return {"apiVersion": "v1", "kind": "List", "items": items}
