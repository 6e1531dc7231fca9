"""The local platform's supervisor: a small kubelet + kube-proxy for one application.

Started detached by `faultkit up` (`python -m faultkit.platforms.local.supervisor`), it runs the
app's Deployments as instances, the Services as relays, and answers a token-protected JSON API on
127.0.0.1 (address, pid and token in state_dir/local/supervisor.json). SIGTERM stops everything.
"""

from __future__ import annotations

import argparse
import fcntl
import itertools
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor, ServiceSpec, load_app
from faultkit.errors import FaultkitError, InputError, PlatformError, Unsupported
from faultkit.platforms.local import actions as act
from faultkit.platforms.local.addresses import free_port
from faultkit.platforms.local.builds import BuildStore
from faultkit.platforms.local.cgroups import CpuGroups, group_name
from faultkit.platforms.local.control import serve
from faultkit.platforms.local.deployed import Deployed
from faultkit.platforms.local.instances import Instance
from faultkit.platforms.local.logfiles import LogWriter
from faultkit.platforms.local.processes import Spawner
from faultkit.platforms.local.relay import Relay
from faultkit.platforms.local.state import LocalState
from faultkit.workspace import Workspace


class Supervisor:
    API = frozenset(
        {
            "status",
            "rollout",
            "patch_field",
            "read_field",
            "start_action",
            "stop_action",
            "kill",
            "endpoint",
            "instance_endpoints",
            "shutdown",
        }
    )

    def __init__(self, workspace: Workspace, app: str, replicas: int, environ: dict[str, str]) -> None:
        self.state = LocalState(workspace.state_dir)
        self.workspace, self.app_name, self.replicas_override, self.environ = (
            workspace,
            app,
            replicas,
            environ,
        )
        self.phase, self.error = "starting", None
        self.app: AppDescriptor | None = None
        self.deployed: Deployed | None = None
        self.store = BuildStore(self.state.builds)
        self.spawner = Spawner(self.state.pids)
        opened = CpuGroups.open(group_name())
        self.cpu_groups, self.cpu_limits = (
            (opened, f"enforced (cgroup v{opened.version})")
            if isinstance(opened, CpuGroups)
            else (None, f"not enforced: {opened}")
        )
        self.specs: dict[str, ServiceSpec] = {}  # workload -> service
        self.current_build: dict[str, str] = {}  # workload -> build id
        self.active: dict[str, list[Instance]] = {}
        self.relays: dict[tuple[str, int], Relay] = {}
        self.actions: dict[str, act.ActiveAction] = {}
        self.lock = threading.RLock()
        self.roll_locks: dict[str, threading.Lock] = {}
        self.counter: dict[str, itertools.count[int]] = {}
        self.handles = itertools.count(1)
        self.stopping = threading.Event()
        self._dead = socket.socket()  # bound, never listening: connecting to it is refused
        self._dead.bind(("127.0.0.1", 0))
        self.dead_port = self._dead.getsockname()[1]

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
        self.deployed = dep = Deployed.apply(app.manifests_dir, self.state.deployed)
        by_workload = {s.workload: s for s in app.services}
        for w in dep.workloads():
            spec = by_workload.get(w)
            if spec is None:
                raise InputError(f"{app.manifests_dir}: workload {w!r} is not a service of {app.name}'s app.yaml")
            if spec.source is None or app.source_dir is None:
                raise Unsupported(
                    f"service {spec.name!r} has no source in {app.name}'s app.yaml, so the local "
                    "platform cannot run it; use the docker or kubernetes platform"
                )
            self.specs[w] = spec
            self.roll_locks[w] = threading.Lock()
            self.counter[w] = itertools.count()
        for w, spec in self.specs.items():
            self.current_build[w] = self.store.build(spec.name, app.source_dir, spec.source, app.common).id
        for svc in dep.services():
            self._sync_relays(svc)
        self._bind_host_ports()
        for w in self.specs:
            with self.lock:
                self.active[w] = [self._new_instance(w, self.current_build[w]) for _ in range(self._replicas(w))]

    def _replicas(self, workload: str) -> int:
        assert self.deployed is not None
        return self.replicas_override or self.deployed.replicas(workload)

    def _bind_host_ports(self) -> None:
        assert self.deployed is not None
        for w in self.specs:
            for c in self.deployed.containers(w):
                for host_port, container_port in c.host_ports:
                    try:
                        relay = Relay(
                            f"{w}/hostPort",
                            container_port,
                            host_port,
                            self._host_endpoints(w, container_port),
                        )
                    except OSError:
                        raise PlatformError(
                            f"port {host_port} (hostPort of {w}/{c.name}) is already in use on "
                            "this machine; stop what uses it or remove the hostPort"
                        ) from None
                    relay.enable()
                    self.relays[(f"{w}/hostPort", host_port)] = relay

    def _host_endpoints(self, workload: str, number: int):  # noqa: ANN202
        return lambda: [i.pod_port(number) for i in self.active.get(workload, []) if i.ready]

    def _new_instance(self, workload: str, build_id: str) -> Instance:
        assert self.deployed is not None
        service = self.specs[workload].name
        iid = f"{service}-{next(self.counter[workload])}"
        inst = Instance(
            id=iid,
            workload=workload,
            service=service,
            build_id=build_id,
            build_dir=self.store.location(build_id),
            containers=self.deployed.containers(workload),
            log=LogWriter(self.state.logs / f"{iid}.log"),
            spawner=self.spawner,
            cpu_groups=self.cpu_groups,
        )
        inst.start(self.resolve, self.environ)
        return inst

    # -- the Service table ------------------------------------------------------------------
    def resolve(self, service: str, port: int) -> int | None:
        """Loopback port for `service:port`: its relay, a refusing port, or None (no such host)."""
        assert self.deployed is not None
        if service not in self.deployed.services():
            return None
        relay = self.relays.get((service, port))
        return (
            relay.listen_port
            if relay is not None and relay.port in self._service_port_numbers(service)
            else self.dead_port
        )

    def _service_port_numbers(self, service: str) -> set[int]:
        assert self.deployed is not None
        return {int(p["port"]) for p in self.deployed.service_ports(service)}

    def _sync_relays(self, service: str) -> None:
        """One enabled relay per port the Service exposes now; a removed port's relay refuses."""
        numbers = self._service_port_numbers(service)
        with self.lock:
            for n in numbers:
                if (service, n) not in self.relays:
                    self.relays[(service, n)] = Relay(service, n, free_port(), self._endpoints(service, n))
                self.relays[(service, n)].enable()
            for (svc, n), relay in self.relays.items():
                if svc == service and n not in numbers:
                    relay.disable()

    def _endpoints(self, service: str, number: int):  # noqa: ANN202
        def ready_ports() -> list[int]:
            dep = self.deployed
            assert dep is not None
            entry = next((p for p in dep.service_ports(service) if int(p["port"]) == number), None)
            if entry is None:
                return []
            target = entry.get("targetPort", number)
            return [
                i.pod_port(i.port_number(target))
                for w in dep.selected_workloads(service)
                for i in list(self.active.get(w, []))
                if i.ready
            ]

        return ready_ports

    def _service_of(self, service: str) -> str:
        """The workload of an app service name (or a workload name)."""
        for w, spec in self.specs.items():
            if service in (spec.name, w):
                return w
        raise InputError(f"{service!r} is not a service of {self.app_name} on the local platform")

    # -- API --------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        services = {}
        for w, spec in self.specs.items():
            services[spec.name] = {
                "workload": w,
                "build": self.current_build.get(w),
                "instances": [i.record() for i in list(self.active.get(w, []))],
                "endpoint": self._endpoint_or_none(spec.name),
            }
        return {
            "phase": self.phase,
            "error": self.error,
            "app": self.app_name,
            "pid": os.getpid(),
            "services": services,
            "actions": sorted(self.actions),
            "cpu_limits": self.cpu_limits,
        }

    def _endpoint_or_none(self, service: str) -> str | None:
        try:
            return self.endpoint(service)
        except FaultkitError:
            return None

    def endpoint(self, service: str, port: int | None = None) -> str:
        assert self.deployed is not None
        w = self._service_of(service)
        names = [s for s in self.deployed.services() if w in self.deployed.selected_workloads(s)]
        names.sort(key=lambda s: s != service)
        for svc in names:
            for p in self.deployed.service_ports(svc):
                relay = self.relays.get((svc, int(p["port"])))
                if relay is not None and (port is None or relay.port == port):
                    return f"http://127.0.0.1:{relay.listen_port}"
        raise PlatformError(
            f"service {service!r} exposes no Service port{'' if port is None else f' {port}'} on the local platform"
        )

    def instance_endpoints(self, service: str) -> dict[str, str]:
        w = self._service_of(service)
        out = {}
        for i in list(self.active.get(w, [])):
            first = next((n for c in i.containers for _, n in c.ports), None)
            if first is not None:
                out[i.id] = f"http://127.0.0.1:{i.pod_port(first)}"
        return out

    def rollout(self, service: str, build_id: str, timeout: float = 60.0) -> None:
        w = self._service_of(service)
        self.store.location(build_id)
        with self.roll_locks[w]:
            previous = self.current_build[w]
            self.current_build[w] = build_id
            try:
                self._roll(w, build_id, timeout, keep_on_failure=False)
            except PlatformError as e:
                self.current_build[w] = previous
                raise PlatformError(f"{e}; rolled back to build {previous[:19]}") from None

    def patch_field(self, workload: str, container: str, path: str, value: str | None, timeout: float = 60.0) -> None:
        assert self.deployed is not None
        changed = self.deployed.patch(workload, container, path, value)
        if changed.startswith("Service/"):
            self._sync_relays(changed.split("/", 1)[1])
            return
        with self.roll_locks[changed]:
            self._roll(changed, self.current_build[changed], timeout, keep_on_failure=True)

    def _roll(self, w: str, build_id: str, timeout: float, keep_on_failure: bool) -> None:
        """Start new instances, wait for them, then stop every old one (or undo)."""
        with self.lock:
            old = list(self.active[w])
            new = [self._new_instance(w, build_id) for _ in range(self._replicas(w))]
            self.active[w] = old + new
        deadline = time.time() + timeout
        while time.time() < deadline and not all(i.ready for i in new):
            time.sleep(0.1)
        ok = all(i.ready for i in new)
        if not ok and not keep_on_failure:
            with self.lock:
                self.active[w] = old
            _stop_all(new)
            raise PlatformError(
                f"rollout of {self.specs[w].name} to build {build_id[:19]} did not become ready within {timeout:g}s"
            )
        with self.lock:
            self.active[w] = new
        _stop_all(old)
        if not ok:
            raise PlatformError(
                f"rollout of {self.specs[w].name} did not become ready within {timeout:g}s; "
                "the new spec stays applied (revert the change to recover)"
            )

    def read_field(self, workload: str, container: str, path: str) -> str | None:
        assert self.deployed is not None
        return self.deployed.read(workload, container, path)

    def kill(self, service: str, instance: str | None = None) -> str:
        w = self._service_of(service)
        chosen = act.pick(list(self.active.get(w, [])), {"instance": instance}, "one")
        if not chosen:
            raise PlatformError(f"{service} has no running instance to kill")
        for r in chosen[0].runners:
            r.signal(signal.SIGKILL)
        return chosen[0].id

    def start_action(self, action: str, service: str, params: dict[str, Any]) -> str:
        if action not in act.SUPPORTED:
            raise act.unsupported(action)
        w = self._service_of(service)
        instances = list(self.active.get(w, []))
        default_mode = "one" if action in ("instance-kill", "instance-failure") else "all"
        chosen = (
            act.pick(instances, params, default_mode) if action not in ("network-delay", "network-loss") else instances
        )
        handle = f"{action}-{next(self.handles)}"
        record = act.ActiveAction(handle, action, service, [i.id for i in chosen])
        if action == "instance-kill":
            for i in chosen:
                for r in i.runners:
                    r.signal(signal.SIGKILL)
        elif action == "instance-failure":
            for i in chosen:
                for r in i.runners:
                    r.suspended = True
                    r.signal(signal.SIGSTOP)
                    record.runners.append(r)
        elif action in ("cpu-stress", "memory-stress"):
            argv, count = act.helper_argv(action, params)
            for i in chosen:
                for _ in range(count):
                    helper = self.spawner.spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    i.runners[0].attach(helper)
                    record.helpers.append((i.runners[0], helper))
        else:
            relays = self._relays_of(w)
            if action == "network-delay":
                ms = act.int_param(params, "ms", 1, 60_000)
                for r in relays:
                    record.relays.append((r, r.delay_s, r.loss))
                    r.delay_s = ms / 1000
            else:
                pct = act.int_param(params, "percent", 1, 100)
                for r in relays:
                    record.relays.append((r, r.delay_s, r.loss))
                    r.loss = pct / 100
        self.actions[handle] = record
        return handle

    def _relays_of(self, w: str) -> list[Relay]:
        assert self.deployed is not None
        return [
            r
            for (svc, _), r in self.relays.items()
            if svc in self.deployed.services() and w in self.deployed.selected_workloads(svc)
        ]

    def stop_action(self, handle: str) -> None:
        record = self.actions.pop(handle, None)
        if record is None:
            raise InputError(f"no running action {handle!r} on the local platform")
        record.revert()

    def shutdown(self) -> None:
        self.stopping.set()

    def stop_everything(self) -> None:
        for record in list(self.actions.values()):
            record.revert()
        with self.lock:
            everything = [i for insts in self.active.values() for i in insts]
        _stop_all(everything)
        for relay in self.relays.values():
            relay.close()
        if self.cpu_groups is not None:
            self.cpu_groups.close()


def _stop_all(instances: list[Instance]) -> None:
    threads = [threading.Thread(target=i.stop) for i in instances]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="faultkit.platforms.local.supervisor")
    parser.add_argument("--root", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--replicas", type=int, default=0)
    args = parser.parse_args(argv)
    ws = Workspace(root=Path(args.root), state_dir=Path(args.state_dir))
    state = LocalState(ws.state_dir)
    state.base.mkdir(parents=True, exist_ok=True)
    lock = open(state.base / "supervisor.lock", "w")  # noqa: SIM115 - held for the process lifetime
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print("another supervisor holds this state folder", file=sys.stderr)
        return 3
    sup = Supervisor(ws, args.app, args.replicas, dict(os.environ))
    token = secrets.token_hex(16)
    server = serve(sup, token)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: sup.stopping.set())
    state.write_info(
        {
            "pid": os.getpid(),
            "port": server.server_address[1],
            "token": token,
            "app": args.app,
            "started": time.time(),
        }
    )
    threading.Thread(target=sup.deploy, daemon=True, name="deploy").start()
    while not sup.stopping.wait(0.5):
        pass
    sup.stop_everything()
    server.shutdown()
    state.remove_info(os.getpid())
    return 0


if __name__ == "__main__":
    sys.exit(main())
