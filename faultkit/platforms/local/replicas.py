"""One replica (the local pod): its containers' processes, kept running with probes and limits.

Each container runs as a process group in the build folder, restarted when it exits with the
kubelet's back-off (backoff.py). Memory limits are enforced by sampling (memory.py): past the
limit the container is killed with SIGKILL, an OOM kill, exit 137. Readiness and liveness probes
are probes.py's. CPU limits are a CFS quota on a cgroup per container (cgroups.py), where the
machine lets the supervisor make cgroups; elsewhere they are not enforced.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from faultkit.platforms.local import memory, probes, processes
from faultkit.platforms.local.addresses import Resolver, free_port, release_port, translate_env
from faultkit.platforms.local.backoff import Backoff
from faultkit.platforms.local.cgroups import CpuGroups
from faultkit.platforms.local.deployed import Container
from faultkit.platforms.local.logfiles import LogWriter
from faultkit.platforms.local.probes import Prober, ProbeSpec
from faultkit.platforms.local.status import ReplicaRecord

PYTHONS = {
    "python",
    "python3",
    f"python3.{sys.version_info.minor}",
    "/usr/bin/python3",
    "/usr/local/bin/python3",
}
BASE_ENV = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "TZ")
# The OpenTelemetry SDK's settings pass from the platform's environment to every service, as a
# cluster's collector address is the node's, not the app's: `eval "$(tools/telemetry/telemetry env)"`
# before `faultkit up` sends an instrumented app's telemetry to the stack. A manifest's own
# OTEL_* values (a service's name) still win.
TELEMETRY_ENV_PREFIX = "OTEL_"


@dataclass(frozen=True)
class Launch:
    """Everything needed to (re)start one container."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]


class Runner:
    """One container's process, kept running like a kubelet would."""

    def __init__(
        self,
        replica: Replica,
        container: Container,
        launch: Launch,
        probe_specs: tuple[ProbeSpec | None, ProbeSpec | None],  # (readiness, liveness)
    ) -> None:
        self.replica = replica
        self.container = container
        self.launch = launch
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.restarts = 0
        self.oom_kills = 0
        self.last_exit: int | None = None
        self.suspended = False
        self.helpers: list[subprocess.Popen[bytes]] = []
        self.cpu_group: Path | None = None
        self.prober = Prober(*probe_specs, self._probe, self._liveness_failed)
        if container.cpu_limit is not None and replica.cpu_groups is not None:
            try:
                self.cpu_group = replica.cpu_groups.limit(f"{replica.id}-{container.name}", container.cpu_limit)
            except OSError as exc:  # e.g. a quota the hierarchy above refuses: run unthrottled, say so
                replica.log.event(
                    "WARNING", f"CPU limit of container {container.name} not applied: {exc}", event="cpu_limit"
                )
        self._oom = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._run, daemon=True, name=f"run-{replica.id}-{container.name}"),
            threading.Thread(target=self._probe_loop, daemon=True, name=f"probe-{replica.id}-{container.name}"),
        ]

    @property
    def ready(self) -> bool:
        return self.prober.ready

    def start(self) -> None:
        for t in self._threads:
            t.start()

    # -- process lifecycle ------------------------------------------------------------------
    def _run(self) -> None:
        backoff = Backoff()
        while not self._stop.is_set():
            with self._lock:
                if self._stop.is_set():
                    return
                self.proc = self.replica.spawner.spawn(
                    self.launch.argv,
                    cwd=self.launch.cwd,
                    env=self.launch.env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                )
                self.started_at = time.time()
                self._oom = False
                if self.cpu_group is not None:
                    CpuGroups.add(self.cpu_group, self.proc.pid)
            threading.Thread(target=self.replica.log.pump, args=(self.proc.stdout,), daemon=True).start()
            rc = memory.watch(self.proc, self.container.memory_limit, self._helper_pids, self._stop, self._oom_kill)
            if self._stop.is_set():
                return
            self.prober.ready = False
            self.last_exit = 137 if self._oom else processes.exit_status(rc)
            if self._oom:
                self.oom_kills += 1
            self.restarts += 1
            delay = backoff.after_exit(time.time() - self.started_at)
            self.replica.log.event(
                "ERROR" if self._oom else "WARNING",
                f"container {self.container.name} {'was OOM-killed' if self._oom else 'exited'} "
                f"(exit {self.last_exit}); restart {self.restarts} in {delay:.1f}s",
                event="oom_kill" if self._oom else "exit",
                exit=self.last_exit,
                restarts=self.restarts,
            )
            self._stop.wait(delay)

    def _helper_pids(self) -> list[int]:
        return [h.pid for h in self.helpers if h.poll() is None]

    def _oom_kill(self, rss: int) -> None:
        proc, limit = self.proc, self.container.memory_limit
        assert proc is not None and limit is not None
        self._oom = True
        self.replica.log.event(
            "ERROR",
            f"OOMKilled: container {self.container.name} used {rss // 2**20} MiB, "
            f"over its limit of {limit // 2**20} MiB; killed with SIGKILL",
            event="oom_kill",
            rss=rss,
            limit=limit,
        )
        processes.signal_group(proc.pid, signal.SIGKILL)
        self.kill_helpers()

    def stop(self, grace: float = 5.0) -> None:
        with self._lock:
            self._stop.set()
            proc = self.proc
        self.kill_helpers()
        if proc is not None:
            processes.terminate(proc, grace)
        for t in self._threads:
            t.join(timeout=grace + 5)
        self.prober.ready = False
        if self.cpu_group is not None:
            with contextlib.suppress(OSError):
                self.cpu_group.rmdir()

    def signal(self, sig: int) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            processes.signal_group(proc.pid, sig)

    def attach(self, helper: subprocess.Popen[bytes]) -> None:
        """A helper process that runs as part of this container: inside its memory and CPU limits."""
        self.helpers.append(helper)
        if self.cpu_group is not None:
            CpuGroups.add(self.cpu_group, helper.pid)

    def kill_helpers(self, only: list[subprocess.Popen[bytes]] | None = None) -> None:
        for h in list(only if only is not None else self.helpers):
            processes.signal_group(h.pid, signal.SIGKILL)
            try:
                h.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            if h in self.helpers:
                self.helpers.remove(h)

    def pids(self) -> list[int]:
        out = self._helper_pids()
        if self.proc is not None and self.proc.poll() is None:
            out.insert(0, self.proc.pid)
        return out

    # -- probes -----------------------------------------------------------------------------
    def _probe_loop(self) -> None:
        while not self._stop.is_set():
            proc = self.proc
            alive = proc is not None and proc.poll() is None
            self._stop.wait(self.prober.tick(alive, self.started_at, self.suspended))

    def _probe(self, spec: ProbeSpec) -> bool:
        port_of = self.replica.port_number
        return probes.check(spec, lambda port: self.replica.pod_port(port_of(port)), self.launch.cwd, self.launch.env)

    def _liveness_failed(self) -> None:
        self.replica.log.event(
            "WARNING",
            f"liveness probe of container {self.container.name} failed; killing it",
            event="liveness_kill",
        )
        self.signal(signal.SIGKILL)


@dataclass
class Replica:
    """A replica of a workload (the local pod): its pod ports and one Runner per container."""

    id: str
    workload: str
    service: str
    build_id: str
    build_dir: Path
    containers: list[Container]
    log: LogWriter
    spawner: processes.Spawner
    cpu_groups: CpuGroups | None = None
    port_map: dict[int, int] = field(default_factory=dict)  # pod port -> loopback port
    runners: list[Runner] = field(default_factory=list)
    terminating: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def pod_port(self, number: int) -> int:
        """The loopback port standing for this pod's port `number` (a fresh one if undeclared)."""
        with self._lock:
            if number not in self.port_map:
                self.port_map[number] = free_port()
            return self.port_map[number]

    def port_number(self, port: object) -> int:
        """A probe's or Service's port, by number or by containerPort name."""
        if isinstance(port, int) or (isinstance(port, str) and port.isdigit()):
            return int(port)
        for c in self.containers:
            for name, number in c.ports:
                if name == port:
                    return number
        return 0  # a name no container declares: maps to a port where nothing listens

    def start(self, resolve: Resolver, environ: dict[str, str]) -> None:
        for c in self.containers:
            for _, number in c.ports:
                self.pod_port(number)
        specs = [container_probes(c, self.workload) for c in self.containers]  # a bad probe fails before any start
        for c, probe_specs in zip(self.containers, specs, strict=True):
            cports = frozenset(n for _, n in c.ports)
            env = {k: v for k, v in environ.items() if k in BASE_ENV or k.startswith(TELEMETRY_ENV_PREFIX)}
            env.update(translate_env(dict(c.env), cports, self.pod_port, resolve))
            env.update({"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "HOSTNAME": self.id})
            argv = [sys.executable if a in PYTHONS and i == 0 else a for i, a in enumerate(c.command)]
            self.runners.append(Runner(self, c, Launch(argv, self.build_dir, env), probe_specs))
        for r in self.runners:
            r.start()

    @property
    def ready(self) -> bool:
        return bool(self.runners) and not self.terminating and all(r.ready for r in self.runners)

    def stop(self, grace: float = 5.0) -> None:
        self.terminating = True
        threads = [threading.Thread(target=r.stop, args=(grace,)) for r in self.runners]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for port in self.port_map.values():
            release_port(port)
        self.log.close()

    def record(self) -> ReplicaRecord:
        exits = [r.last_exit for r in self.runners if r.last_exit is not None]
        return {
            "id": self.id,
            "service": self.service,
            "workload": self.workload,
            "build": self.build_id,
            "ready": self.ready,
            "restarts": sum(r.restarts for r in self.runners),
            "oom_kills": sum(r.oom_kills for r in self.runners),
            "last_exit": exits[-1] if exits else None,
            "pids": [p for r in self.runners for p in r.pids()],
            "ports": {str(k): v for k, v in self.port_map.items()},
        }


def container_probes(container: Container, workload: str) -> tuple[ProbeSpec | None, ProbeSpec | None]:
    """(readiness, liveness) of a container, parsed from its manifest."""
    where = f"container {container.name} of {workload}"
    return (
        ProbeSpec.parse(container.readiness, f"{where}: readinessProbe"),
        ProbeSpec.parse(container.liveness, f"{where}: livenessProbe"),
    )


def stop_all(replicas: list[Replica]) -> None:
    """Stop replicas side by side: each waits out its own grace period, not the others'."""
    threads = [threading.Thread(target=r.stop) for r in replicas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class ReplicaTable:
    """Which replicas each workload has now: written by the kubelet, read by the proxy and the actions."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._by_workload: dict[str, list[Replica]] = {}

    def of(self, workload: str) -> list[Replica]:
        """The workload's replicas now (a copy: the table changes under a rollout)."""
        return list(self._by_workload.get(workload, []))

    def ready(self, workload: str) -> list[Replica]:
        return [r for r in self.of(workload) if r.ready]

    def put(self, workload: str, replicas: list[Replica]) -> None:
        with self.lock:
            self._by_workload[workload] = list(replicas)

    def everything(self) -> list[Replica]:
        with self.lock:
            return [r for rs in self._by_workload.values() for r in rs]
