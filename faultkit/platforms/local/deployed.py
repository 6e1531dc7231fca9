"""The deployed manifests: the app's objects as applied, patched in place by config faults.

They live as one YAML file per object under state_dir/local/deployed/, written atomically; the
repository's manifest files are only ever read.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from faultkit.apps import manifests
from faultkit.apps.quantities import cpu_millis, memory_bytes
from faultkit.errors import InputError


@dataclass(frozen=True)
class Container:
    name: str
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    ports: tuple[tuple[str, int], ...]  # (name, containerPort)
    memory_limit: int | None
    cpu_limit: int | None  # millicores
    readiness: dict[str, Any] | None
    liveness: dict[str, Any] | None
    host_ports: tuple[tuple[int, int], ...]  # (hostPort, containerPort)


def container_of(spec: dict[str, Any]) -> Container:
    command = [str(x) for x in (spec.get("command") or [])] + [str(x) for x in (spec.get("args") or [])]
    if not command:
        raise InputError(f"container {spec.get('name')!r}: no command; the local platform needs one")
    env = tuple((str(e["name"]), str(e.get("value", ""))) for e in spec.get("env") or [] if "valueFrom" not in e)
    ports = tuple((str(p.get("name", "")), int(p["containerPort"])) for p in spec.get("ports") or [])
    host_ports = tuple(
        (int(p["hostPort"]), int(p["containerPort"])) for p in spec.get("ports") or [] if p.get("hostPort")
    )
    limits = (spec.get("resources") or {}).get("limits") or {}
    try:
        memory_limit, cpu_limit = memory_bytes(limits.get("memory")), cpu_millis(limits.get("cpu"))
    except InputError as e:
        raise InputError(f"container {spec.get('name')!r}: resources.limits: {e}") from None
    return Container(
        name=str(spec.get("name", "")),
        command=tuple(command),
        env=env,
        ports=ports,
        memory_limit=memory_limit,
        cpu_limit=cpu_limit,
        readiness=spec.get("readinessProbe"),
        liveness=spec.get("livenessProbe"),
        host_ports=host_ports,
    )


def _bare(workload: str) -> str:
    """`Deployment/cart` -> `cart`; `Service/<name>` stays as it is."""
    kind, sep, name = workload.partition("/")
    return name if sep and kind in manifests.WORKLOAD_KINDS else workload


class Deployed:
    """The applied objects, keyed by (kind, name)."""

    def __init__(self, folder: Path, objects: dict[tuple[str, str], dict[str, Any]]) -> None:
        self.folder = folder
        self.objects = objects

    @classmethod
    def apply(cls, manifests_dir: Path, folder: Path) -> Deployed:
        docs = manifests.load_manifests(manifests_dir)
        out = cls(folder, {(d.kind, d.name): copy.deepcopy(d.body) for d in docs})
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.yaml"):
            old.unlink()
        for key in out.objects:
            out._write(key)
        return out

    def _write(self, key: tuple[str, str]) -> None:
        path = self.folder / f"{key[0]}-{key[1]}.yaml"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(yaml.safe_dump(self.objects[key], sort_keys=False))
        os.replace(tmp, path)

    def docs(self) -> list[manifests.Doc]:
        return [
            manifests.Doc(kind, name, body, self.folder / f"{kind}-{name}.yaml", 1)
            for (kind, name), body in self.objects.items()
        ]

    def workloads(self) -> list[str]:
        return [name for (kind, name) in self.objects if kind in manifests.WORKLOAD_KINDS]

    def services(self) -> list[str]:
        return [name for (kind, name) in self.objects if kind == "Service"]

    def workload(self, name: str) -> dict[str, Any]:
        name = name.split("/", 1)[-1]
        for kind in manifests.WORKLOAD_KINDS:  # called per relayed connection: a dict lookup
            if (kind, name) in self.objects:
                return self.objects[(kind, name)]
        return manifests.find_object(self.docs(), "workload", name).body  # raises the usual error

    def service(self, name: str) -> dict[str, Any]:
        return self.objects[("Service", name)]

    def replicas(self, name: str) -> int:
        return int(self.workload(name).get("spec", {}).get("replicas", 1))

    def pod_labels(self, name: str) -> dict[str, str]:
        return self.workload(name).get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {}) or {}

    def containers(self, name: str) -> list[Container]:
        return [container_of(c) for c in manifests.pod_spec(self.workload(name)).get("containers") or []]

    def service_ports(self, name: str) -> list[dict[str, Any]]:
        return list(self.service(name).get("spec", {}).get("ports") or [])

    def selected_workloads(self, service: str) -> list[str]:
        selector = self.service(service).get("spec", {}).get("selector") or {}
        if not selector:
            return []
        return [w for w in self.workloads() if all(self.pod_labels(w).get(k) == v for k, v in selector.items())]

    def read(self, workload: str, container: str, path: str) -> str | None:
        workload = _bare(workload)
        return manifests.get_field(manifests.find_container(self.docs(), workload, container), path)

    def patch(self, workload: str, container: str, path: str, value: str | None) -> str:
        """Apply the change; returns the workload (or Service/<name>) whose objects changed."""
        if workload.startswith("Service/"):
            name = workload.split("/", 1)[1]
            if ("Service", name) not in self.objects:
                raise InputError(f"no Service named {name!r} in the deployed manifests")
            body = self.objects[("Service", name)]
            body["spec"] = manifests.set_field(body.get("spec", {}), path, value)
            self._write(("Service", name))
            return workload
        workload = _bare(workload)
        body = self.workload(workload)
        key = next(k for k, v in self.objects.items() if v is body)
        spec = manifests.pod_spec(body)
        containers = spec.get("containers") or []
        for i, c in enumerate(containers):
            if c.get("name") == container:
                changed = manifests.set_field(c, path, value)
                container_of(changed)  # refuse what the local kubelet could not run, before applying
                containers[i] = changed
                break
        else:
            manifests.find_container(self.docs(), workload, container)  # raises with a good message
        self._write(key)
        return key[1]
