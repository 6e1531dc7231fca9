"""The local platform's supervisor: one application's controllers, composed, behind one API.

It deploys the app's manifests (deployed.py) and wires the controllers that run them: the kubelet
(replicas and their containers), the proxy (Service relays and the address table), the rollout
controller and the action executor. The detached process around it, and the control API the
client calls, are daemon.py's; the methods named in `API` are what that API serves.
"""

from __future__ import annotations

import os
import threading
import traceback
from dataclasses import dataclass
from typing import Any

from faultkit.apps.descriptor import AppDescriptor, ServiceSpec, load_app
from faultkit.errors import FaultkitError, InputError, PlatformError, Unsupported
from faultkit.platforms.local import actions as act
from faultkit.platforms.local.builds import BuildStore
from faultkit.platforms.local.cgroups import CpuGroups, group_name
from faultkit.platforms.local.deployed import Deployed
from faultkit.platforms.local.kubelet import Kubelet
from faultkit.platforms.local.processes import Spawner
from faultkit.platforms.local.proxy import Proxy
from faultkit.platforms.local.replicas import ReplicaTable
from faultkit.platforms.local.rollouts import Rollouts
from faultkit.platforms.local.state import LocalState
from faultkit.platforms.local.status import Phase, ServiceStatus, SupervisorStatus
from faultkit.workspace import Workspace


@dataclass(frozen=True)
class Controllers:
    """What runs a deployed app; they exist once its manifests are applied."""

    deployed: Deployed
    kubelet: Kubelet
    proxy: Proxy
    rollouts: Rollouts
    actions: act.ActionExecutor


class Supervisor:
    API = frozenset(
        {
            "status",
            "rollout",
            "patch_field",
            "read_field",
            "start_action",
            "stop_action",
            "action_leftovers",
            "endpoint",
            "instance_endpoints",
            "shutdown",
        }
    )

    def __init__(self, workspace: Workspace, app: str, replicas: int, environ: dict[str, str]) -> None:
        self.state = LocalState(workspace.state_dir)
        self.workspace, self.app_name, self.replicas_override, self.environ = workspace, app, replicas, environ
        self.phase: Phase = "starting"
        self.error: str | None = None
        self.app: AppDescriptor | None = None
        self.store = BuildStore(self.state.builds)
        self.spawner = Spawner(self.state.pids)
        opened = CpuGroups.open(group_name())
        self.cpu_groups: CpuGroups | None = opened if isinstance(opened, CpuGroups) else None
        self.cpu_limits = (
            f"enforced (cgroup v{opened.version})" if isinstance(opened, CpuGroups) else f"not enforced: {opened}"
        )
        self.specs: dict[str, ServiceSpec] = {}  # workload -> app service, known before the builds are
        self.controllers: Controllers | None = None
        self.stopping = threading.Event()

    # -- deploy -----------------------------------------------------------------------------
    def deploy(self) -> None:
        try:
            self.phase = "deploying"
            self._deploy()
            self.phase = "running"
        except FaultkitError as e:
            self.phase, self.error = "failed", str(e)
        except Exception as e:  # noqa: BLE001 - reported through status, traceback in the log
            traceback.print_exc()
            self.phase, self.error = "failed", f"{type(e).__name__}: {e}"

    def _deploy(self) -> None:
        self.app = app = load_app(self.workspace, self.app_name)
        deployed = Deployed.apply(app.manifests_dir, self.state.deployed)
        self.specs = specs = self._specs(app, deployed)
        builds = {w: self._build(app, spec) for w, spec in specs.items()}
        table = ReplicaTable()
        proxy = Proxy(deployed, table)
        kubelet = Kubelet(
            app_name=self.app_name,
            deployed=deployed,
            specs=specs,
            store=self.store,
            logs=self.state.logs,
            spawner=self.spawner,
            cpu_groups=self.cpu_groups,
            environ=self.environ,
            replicas_override=self.replicas_override,
            table=table,
            resolve=proxy.resolve,
        )
        self.controllers = c = Controllers(
            deployed,
            kubelet,
            proxy,
            Rollouts(kubelet, builds),
            act.ActionExecutor(table, self.spawner, proxy.relays_of),
        )
        for svc in deployed.services():
            proxy.sync(svc)
        proxy.bind_host_ports(list(specs))
        for w in specs:
            c.kubelet.run(w, builds[w])

    @staticmethod
    def _specs(app: AppDescriptor, deployed: Deployed) -> dict[str, ServiceSpec]:
        """workload -> the app service it runs; every workload must be a service with source."""
        by_workload = {s.workload: s for s in app.services}
        specs = {}
        for w in deployed.workloads():
            spec = by_workload.get(w)
            if spec is None:
                raise InputError(f"{app.manifests_dir}: workload {w!r} is not a service of {app.name}'s app.yaml")
            if spec.source is None or app.source_dir is None:
                raise Unsupported(
                    f"service {spec.name!r} has no source in {app.name}'s app.yaml, so the local "
                    "platform cannot run it; use the docker or kubernetes platform"
                )
            specs[w] = spec
        return specs

    def _build(self, app: AppDescriptor, spec: ServiceSpec) -> str:
        assert spec.source is not None and app.source_dir is not None  # _specs refused any other
        return self.store.build(spec.name, app.source_dir, spec.source, app.common).id

    def _running(self) -> Controllers:
        if self.controllers is None:
            raise PlatformError(f"{self.app_name} is not deployed yet ({self.phase}); try again when `up` returns")
        return self.controllers

    # -- API --------------------------------------------------------------------------------
    def status(self) -> SupervisorStatus:
        c = self.controllers
        services: dict[str, ServiceStatus] = {}
        for w, spec in self.specs.items():
            services[spec.name] = {
                "workload": w,
                "build": c.rollouts.build(w) if c is not None else None,
                "instances": [r.record() for r in c.kubelet.table.of(w)] if c is not None else [],
                "endpoint": self._endpoint_or_none(spec.name),
            }
        return {
            "phase": self.phase,
            "error": self.error,
            "app": self.app_name,
            "pid": os.getpid(),
            "services": services,
            "actions": c.actions.handles_in_force() if c is not None else [],
            "cpu_limits": self.cpu_limits,
        }

    def _endpoint_or_none(self, service: str) -> str | None:
        try:
            return self.endpoint(service)
        except FaultkitError:
            return None

    def endpoint(self, service: str, port: int | None = None) -> str:
        c = self._running()
        return c.proxy.endpoint(c.kubelet.workload_of(service), service, port)

    def instance_endpoints(self, service: str) -> dict[str, str]:
        c = self._running()
        return c.kubelet.instance_endpoints(c.kubelet.workload_of(service))

    def rollout(self, service: str, build_id: str, timeout: float = 60.0) -> None:
        c = self._running()
        w = c.kubelet.workload_of(service)
        self.store.location(build_id)  # an unknown build fails here, before anything changes
        c.rollouts.to_build(w, build_id, timeout)

    def patch_field(self, workload: str, container: str, path: str, value: str | None, timeout: float = 60.0) -> None:
        c = self._running()
        changed = c.deployed.patch(workload, container, path, value)
        if changed.startswith("Service/"):
            c.proxy.sync(changed.split("/", 1)[1])
            return
        c.rollouts.restart(changed, timeout)

    def read_field(self, workload: str, container: str, path: str) -> str | None:
        return self._running().deployed.read(workload, container, path)

    def start_action(self, action: str, service: str, params: dict[str, Any]) -> str:
        if action not in act.SUPPORTED:
            raise act.unsupported(action)
        c = self._running()
        return c.actions.start(action, c.kubelet.workload_of(service), service, params)

    def stop_action(self, handle: str) -> None:
        c = self.controllers
        if c is None:
            raise InputError(f"no running action {handle!r} on the local platform")
        c.actions.stop(handle)

    def action_leftovers(self, handle: str) -> list[str]:
        c = self.controllers
        return c.actions.leftovers(handle) if c is not None else []

    def shutdown(self) -> None:
        self.stopping.set()

    def stop_everything(self) -> None:
        c = self.controllers
        if c is not None:
            c.actions.revert_all()
            c.kubelet.stop_everything()
            c.proxy.close()
        if self.cpu_groups is not None:
            self.cpu_groups.close()
