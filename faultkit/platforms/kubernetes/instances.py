"""Pods as the protocol's Instances: readiness from conditions, restarts, OOM kills, last exit.

A pod that is deleted and replaced restarts nothing in Kubernetes' own counts (the new pod starts
at restartCount 0), but it is a restart of that replica for the validator. The ledger (a file under
faultkit's state folder) remembers each pod it has seen in a slot `<service>-<i>`; a pod that
vanishes outside a rollout faultkit made counts as one restart of its slot.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from faultkit.platforms.base import Instance
from faultkit.platforms.kubernetes.images import image_digest
from faultkit.yamlio import atomic_write


def is_ready(pod: dict[str, Any]) -> bool:
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def container_status(pod: dict[str, Any], container: str) -> dict[str, Any]:
    for s in (pod.get("status") or {}).get("containerStatuses") or []:
        if s.get("name") == container:
            return dict(s)
    return {}


def last_exit(status: dict[str, Any]) -> int | None:
    term = (status.get("lastState") or {}).get("terminated") or (status.get("state") or {}).get("terminated")
    return int(term["exitCode"]) if term and term.get("exitCode") is not None else None


def oom_kills(status: dict[str, Any]) -> int:
    # the kubelet keeps only the last termination: an OOM kill is counted while it is the last one,
    # and the ledger adds those it saw before (see Ledger.observe)
    term = (status.get("lastState") or {}).get("terminated") or {}
    return 1 if term.get("reason") == "OOMKilled" else 0


class Ledger:
    """service -> {"slots": {pod uid: slot}, "replaced": {slot: n}, "ooms": {uid@restartCount: 1}, "planned": [uid]}."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # the sampler asks for instances and request counts from several threads at once
        self.lock = threading.RLock()

    def _load(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.path.read_text())
            return data
        except (FileNotFoundError, ValueError):
            return {}

    def retire(self, service: str, uids: list[str]) -> None:
        """Pods that a rollout faultkit makes will replace: their going is not a restart."""
        with self.lock:
            self._retire(service, uids)

    def _retire(self, service: str, uids: list[str]) -> None:
        data = self._load()
        svc = data.setdefault(service, {"slots": {}, "replaced": {}, "ooms": {}, "planned": []})
        svc["planned"] = sorted(set(svc["planned"]) | set(uids))
        atomic_write(self.path, json.dumps(data, sort_keys=True))

    def observe(self, service: str, pods: list[dict[str, Any]], container: str,
                build_of: Callable[[str, str], str]) -> list[Instance]:
        with self.lock:
            return self._observe(service, pods, container, build_of)

    def _observe(self, service: str, pods: list[dict[str, Any]], container: str,
                 build_of: Callable[[str, str], str]) -> list[Instance]:
        data = self._load()
        before = json.dumps(data, sort_keys=True)
        svc = data.setdefault(service, {"slots": {}, "replaced": {}, "ooms": {}, "planned": []})
        live = sorted((p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")),
                      key=lambda p: (str(p["metadata"].get("creationTimestamp")), p["metadata"]["name"]))
        uids = {str(p["metadata"]["uid"]) for p in pods}
        slots: dict[str, int] = svc["slots"]
        for uid, slot in list(slots.items()):
            if uid not in uids:
                if uid not in svc["planned"]:
                    svc["replaced"][str(slot)] = svc["replaced"].get(str(slot), 0) + 1
                del slots[uid]
        svc["planned"] = [u for u in svc["planned"] if u in uids]
        out = []
        for pod in live:
            uid = str(pod["metadata"]["uid"])
            if uid not in slots:
                taken = set(slots.values())
                slots[uid] = next(i for i in range(len(taken) + 1) if i not in taken)
            slot = slots[uid]
            st = container_status(pod, container)
            if oom_kills(st):
                svc["ooms"][f"{uid}@{st.get('restartCount', 0)}"] = slot
            ooms = sum(1 for v in svc["ooms"].values() if v == slot)
            out.append(Instance(id=f"{service}-{slot}", service=service,
                                build=build_of(image_digest(str(st.get("imageID") or "")), str(st.get("image") or "")),
                                ready=is_ready(pod), restarts=int(st.get("restartCount") or 0)
                                + int(svc["replaced"].get(str(slot), 0)),
                                oom_kills=ooms, last_exit=last_exit(st)))
        after = json.dumps(data, sort_keys=True)
        if after != before:  # most samples change nothing: no write (and fsync) for them
            atomic_write(self.path, after)
        return sorted(out, key=lambda i: i.id)

    def pod_of(self, service: str, instance: str) -> str | None:
        """The uid of the pod now in slot `instance` (e.g. cart-0)."""
        slot = instance.rsplit("-", 1)[-1]
        for uid, s in self._load().get(service, {}).get("slots", {}).items():
            if str(s) == slot:
                return str(uid)
        return None
