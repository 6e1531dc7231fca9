"""When a rollout is done: one pure predicate over the objects the API server returned.

A rollout counts as complete only when no old replica can still answer a request:

* the Deployment controller has seen the latest spec and reports it rolled out, by the rules of
  `kubectl rollout status` (observedGeneration >= generation, updatedReplicas == replicas ==
  availableReplicas == spec.replicas);
* no pod of an older ReplicaSet remains, terminating ones included (a terminating pod may still
  serve the connections it holds);
* every pod of the new ReplicaSet runs the expected image (ExpectedImage.runs);
* each Service selecting the pods lists, in its EndpointSlices, only the new pods (and all of them).

Objects are plain dicts in the API's JSON shape (camelCase), as the API server sends them, so
recorded objects and live ones go through the same code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from faultkit.platforms.kubernetes.images import ExpectedImage, image_digest

REVISION = "deployment.kubernetes.io/revision"

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class Progress:
    done: bool
    failed: str | None  # the controller gave up (progress deadline), or a pod cannot start
    waiting: tuple[str, ...]  # what is not true yet, in words, for a timeout's message


def _meta(o: Obj) -> Mapping[str, Any]:
    return o.get("metadata") or {}


def _owned_by(o: Obj, uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in _meta(o).get("ownerReferences") or [])


def current_replicaset(deployment: Obj, replicasets: Iterable[Obj]) -> Obj | None:
    """The ReplicaSet of the Deployment's current revision (the controller writes the same annotation on both)."""
    revision = (_meta(deployment).get("annotations") or {}).get(REVISION)
    uid = _meta(deployment).get("uid")
    for rs in replicasets:
        if _owned_by(rs, str(uid)) and (_meta(rs).get("annotations") or {}).get(REVISION) == revision:
            return rs
    return None


def rollout_progress(deployment: Obj, replicasets: Iterable[Obj], pods: Iterable[Obj], slices: Iterable[Obj],
                     container: str, image: ExpectedImage | None = None) -> Progress:
    """`image`: what the new pods must run; None when the change was not an image (a setting), so
    any image is right."""
    replicasets, pods, slices = list(replicasets), list(pods), list(slices)
    name = str(_meta(deployment).get("name"))
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    # a container that keeps exiting may yet come up (its database starts later), so it decides
    # nothing, but it is said first: a timeout then names the exit, not only the replicas missing
    crashed = [c for c in (_crashed(pod, container) for pod in pods) if c]
    waiting: list[str] = []
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
            deadline = f"Deployment {name}: {cond.get('message') or 'progress deadline exceeded'}"
            return Progress(False, "; ".join([deadline, *crashed]), ())
    want = int(spec.get("replicas", 1))
    if int(status.get("observedGeneration") or 0) < int(_meta(deployment).get("generation") or 0):
        waiting.append(f"Deployment {name}: the controller has not observed the new spec yet")
    counts = {k: int(status.get(k) or 0) for k in ("replicas", "updatedReplicas", "availableReplicas")}
    if counts["updatedReplicas"] < want:
        waiting.append(f"Deployment {name}: {counts['updatedReplicas']} of {want} replicas updated")
    if counts["replicas"] > counts["updatedReplicas"]:
        waiting.append(f"Deployment {name}: {counts['replicas'] - counts['updatedReplicas']} old replicas pending "
                       "termination")
    if counts["availableReplicas"] < counts["updatedReplicas"]:
        waiting.append(f"Deployment {name}: {counts['availableReplicas']} of {counts['updatedReplicas']} updated "
                       "replicas available")
    rs = current_replicaset(deployment, replicasets)
    if rs is None:
        waiting.append(f"Deployment {name}: no ReplicaSet of its current revision yet")
        return Progress(False, None, tuple(crashed + waiting))
    rs_uid = str(_meta(rs).get("uid"))
    others = {str(_meta(r).get("uid")) for r in replicasets if _owned_by(r, str(_meta(deployment).get("uid")))}
    others.discard(rs_uid)
    new_pods: set[str] = set()
    for pod in pods:
        pname = str(_meta(pod).get("name"))
        if any(_owned_by(pod, uid) for uid in others):
            state = "terminating" if _meta(pod).get("deletionTimestamp") else "running"
            waiting.append(f"pod {pname} of an older ReplicaSet is still {state}")
            continue
        if not _owned_by(pod, rs_uid):
            continue
        if _meta(pod).get("deletionTimestamp"):
            continue  # a new pod being replaced; its successor is counted by the controller
        new_pods.add(pname)
        failed = _cannot_start(pod, container)
        if failed:
            return Progress(False, f"pod {pname}: {failed}", ())
        if image is not None:
            running: Obj = next((s for s in (pod.get("status") or {}).get("containerStatuses") or []
                                 if s.get("name") == container), {})
            if not image.runs(running):
                got = image_digest(str(running.get("imageID") or ""))
                waiting.append(f"pod {pname} runs image {got or '(not started)'}, not the rolled-out one")
    if len(new_pods) < want:
        waiting.append(f"Deployment {name}: {len(new_pods)} of {want} pods of the new ReplicaSet exist")
    for sl in slices:
        listed = {str((ep.get("targetRef") or {}).get("name")): bool((ep.get("conditions") or {}).get("ready"))
                  for ep in sl.get("endpoints") or []}
        svc = str((_meta(sl).get("labels") or {}).get("kubernetes.io/service-name", _meta(sl).get("name")))
        for pod_name in sorted(set(listed) - new_pods):
            waiting.append(f"Service {svc} still lists pod {pod_name}")
        for pod_name in sorted(new_pods):
            if not listed.get(pod_name) and _all_slices_miss(slices, svc, pod_name):
                waiting.append(f"Service {svc} does not list pod {pod_name} as ready yet")
    return Progress(not waiting, None, tuple(dict.fromkeys(crashed + waiting)))


def _all_slices_miss(slices: list[Obj], svc: str, pod_name: str) -> bool:
    """A Service may spread its endpoints over several slices: the pod is missing only if none lists it ready."""
    for sl in slices:
        if (_meta(sl).get("labels") or {}).get("kubernetes.io/service-name", _meta(sl).get("name")) != svc:
            continue
        for ep in sl.get("endpoints") or []:
            if (ep.get("targetRef") or {}).get("name") == pod_name and (ep.get("conditions") or {}).get("ready"):
                return False
    return True


# waiting reasons that no amount of waiting fixes: the rollout has failed
STUCK = ("ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError",
         "CreateContainerError")


def _crashed(pod: Obj, container: str) -> str | None:
    """`pod P: container C exited 3 (Error), 4 restarts` for a container that is not ready after
    exiting and being restarted, else None (one restarted once and serving again is no news)."""
    for s in (pod.get("status") or {}).get("containerStatuses") or []:
        term = (s.get("lastState") or {}).get("terminated") or {}
        if s.get("name") == container and not s.get("ready") and int(s.get("restartCount") or 0) > 0 and term:
            return (f"pod {_meta(pod).get('name')}: container {container} exited {term.get('exitCode')} "
                    f"({term.get('reason') or 'no reason given'}), {s.get('restartCount')} restarts")
    return None


def _cannot_start(pod: Obj, container: str) -> str | None:
    for s in (pod.get("status") or {}).get("containerStatuses") or []:
        if s.get("name") != container:
            continue
        reason = ((s.get("state") or {}).get("waiting") or {}).get("reason")
        if reason in STUCK:
            message = ((s.get("state") or {}).get("waiting") or {}).get("message", "")
            return f"container {container}: {reason}: {message}"
    return None
