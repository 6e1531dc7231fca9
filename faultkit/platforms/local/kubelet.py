"""The kubelet: starts and stops the replicas of each workload and keeps the replica table.

The table (replicas.ReplicaTable) is what the proxy reads for endpoints and the action executor
picks from; the rollout controller changes it through `surge` and `keep`. Each replica keeps its
own containers running, probed and within their limits (replicas.py).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from faultkit.apps.descriptor import ServiceSpec
from faultkit.errors import InputError
from faultkit.platforms.local.addresses import Resolver
from faultkit.platforms.local.builds import BuildStore
from faultkit.platforms.local.cgroups import CpuGroups
from faultkit.platforms.local.deployed import Deployed
from faultkit.platforms.local.logfiles import LogWriter
from faultkit.platforms.local.processes import Spawner
from faultkit.platforms.local.replicas import Replica, ReplicaTable, stop_all


class Kubelet:
    def __init__(
        self,
        *,
        app_name: str,
        deployed: Deployed,
        specs: dict[str, ServiceSpec],  # workload -> the app service it runs
        store: BuildStore,
        logs: Path,
        spawner: Spawner,
        cpu_groups: CpuGroups | None,
        environ: dict[str, str],
        replicas_override: int,
        table: ReplicaTable,
        resolve: Resolver,
    ) -> None:
        self.app_name, self.deployed, self.specs, self.store = app_name, deployed, specs, store
        self.logs, self.spawner, self.cpu_groups, self.environ = logs, spawner, cpu_groups, environ
        self.replicas_override, self.table, self.resolve = replicas_override, table, resolve
        self.counter = {w: itertools.count() for w in specs}

    def workload_of(self, service: str) -> str:
        """The workload of an app service name (or of a workload name)."""
        for w, spec in self.specs.items():
            if service in (spec.name, w):
                return w
        raise InputError(f"{service!r} is not a service of {self.app_name} on the local platform")

    def service_name(self, workload: str) -> str:
        return self.specs[workload].name

    def wanted(self, workload: str) -> int:
        """How many replicas the workload should have: `up --replicas`, else its manifest's count."""
        return self.replicas_override or self.deployed.replicas(workload)

    def start(self, workload: str, build_id: str) -> Replica:
        """Start one more replica of the workload running `build_id` (not yet in the table)."""
        service = self.specs[workload].name
        rid = f"{service}-{next(self.counter[workload])}"
        replica = Replica(
            id=rid,
            workload=workload,
            service=service,
            build_id=build_id,
            build_dir=self.store.location(build_id),
            containers=self.deployed.containers(workload),
            log=LogWriter(self.logs / f"{rid}.log"),
            spawner=self.spawner,
            cpu_groups=self.cpu_groups,
        )
        replica.start(self.resolve, self.environ)
        return replica

    def run(self, workload: str, build_id: str) -> None:
        """The first deployment of a workload: its wanted count of replicas."""
        with self.table.lock:
            self.table.put(workload, [self.start(workload, build_id) for _ in range(self.wanted(workload))])

    def surge(self, workload: str, build_id: str) -> tuple[list[Replica], list[Replica]]:
        """Start a full set of new replicas beside the old ones: (old, new)."""
        with self.table.lock:
            old = self.table.of(workload)
            new = [self.start(workload, build_id) for _ in range(self.wanted(workload))]
            self.table.put(workload, old + new)
        return old, new

    def keep(self, workload: str, keep: list[Replica], drop: list[Replica]) -> None:
        """Leave only `keep` in the table, then stop `drop`."""
        self.table.put(workload, keep)
        stop_all(drop)

    def instance_endpoints(self, workload: str) -> dict[str, str]:
        """Each replica's own address: its first containerPort."""
        out = {}
        for r in self.table.of(workload):
            first = next((n for c in r.containers for _, n in c.ports), None)
            if first is not None:
                out[r.id] = f"http://127.0.0.1:{r.pod_port(first)}"
        return out

    def stop_everything(self) -> None:
        stop_all(self.table.everything())
