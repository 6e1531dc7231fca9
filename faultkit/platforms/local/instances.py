"""One instance (a replica, the local pod): its containers' processes, probes, limits, restarts.

Each container runs as a process group in the build folder, restarted when it exits with the
kubelet's back-off (0.5 s doubling to 10 s, reset after 30 s up). Memory limits are enforced by
sampling the resident memory of the container's process tree (plus helper processes direct
actions attach to it) every 200 ms and killing it with SIGKILL past the limit: an OOM kill, exit
137. CPU limits are a CFS quota on a cgroup per container (cgroups.py), where the machine lets the
supervisor make cgroups; elsewhere they are not enforced.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from faultkit.platforms.local import processes
from faultkit.platforms.local.addresses import free_port, translate_env
from faultkit.platforms.local.cgroups import CpuGroups
from faultkit.platforms.local.deployed import Container
from faultkit.platforms.local.logfiles import LogWriter

SAMPLE_S = 0.2
BACKOFF_START, BACKOFF_CAP, BACKOFF_RESET_AFTER = 0.5, 10.0, 30.0
PERIOD_CAP_S = 1.0
PYTHONS = {
    "python",
    "python3",
    f"python3.{sys.version_info.minor}",
    "/usr/bin/python3",
    "/usr/local/bin/python3",
}
BASE_ENV = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "TZ")


@dataclass
class Launch:
    """Everything needed to (re)start one container."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]


class Runner:
    """One container's process, kept running like a kubelet would."""

    def __init__(self, inst: Instance, container: Container, launch: Launch) -> None:
        self.inst = inst
        self.container = container
        self.launch = launch
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.ready = False
        self.restarts = 0
        self.oom_kills = 0
        self.last_exit: int | None = None
        self.suspended = False
        self.helpers: list[subprocess.Popen[bytes]] = []
        self.cpu_group: Path | None = None
        if container.cpu_limit is not None and inst.cpu_groups is not None:
            try:
                self.cpu_group = inst.cpu_groups.limit(f"{inst.id}-{container.name}", container.cpu_limit)
            except OSError as exc:  # e.g. a quota the hierarchy above refuses: run unthrottled, say so
                inst.log.event(
                    "WARNING", f"CPU limit of container {container.name} not applied: {exc}", event="cpu_limit"
                )
        self._oom = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._run, daemon=True, name=f"run-{inst.id}-{container.name}"),
            threading.Thread(target=self._probe_loop, daemon=True, name=f"probe-{inst.id}-{container.name}"),
        ]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    # -- process lifecycle ------------------------------------------------------------------
    def _run(self) -> None:
        backoff = BACKOFF_START
        while not self._stop.is_set():
            with self._lock:
                if self._stop.is_set():
                    return
                self.proc = self.inst.spawner.spawn(
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
            threading.Thread(target=self.inst.log.pump, args=(self.proc.stdout,), daemon=True).start()
            rc = self._watch(self.proc)
            if self._stop.is_set():
                return
            self.ready = False
            self.last_exit = 137 if self._oom else processes.exit_status(rc)
            if self._oom:
                self.oom_kills += 1
            self.restarts += 1
            if time.time() - self.started_at >= BACKOFF_RESET_AFTER:
                backoff = BACKOFF_START
            self.inst.log.event(
                "ERROR" if self._oom else "WARNING",
                f"container {self.container.name} {'was OOM-killed' if self._oom else 'exited'} "
                f"(exit {self.last_exit}); restart {self.restarts} in {backoff:.1f}s",
                event="oom_kill" if self._oom else "exit",
                exit=self.last_exit,
                restarts=self.restarts,
            )
            self._stop.wait(backoff)
            backoff = min(backoff * 2, BACKOFF_CAP)

    def _watch(self, proc: subprocess.Popen[bytes]) -> int:
        limit = self.container.memory_limit
        while True:
            rc = proc.poll()
            if rc is not None:
                return rc
            if limit is not None and not self._stop.is_set():
                rss = processes.tree_rss([proc.pid, *(h.pid for h in self.helpers if h.poll() is None)])
                if rss > limit:
                    self._oom = True
                    self.inst.log.event(
                        "ERROR",
                        f"OOMKilled: container {self.container.name} used {rss // 2**20} MiB, "
                        f"over its limit of {limit // 2**20} MiB; killed with SIGKILL",
                        event="oom_kill",
                        rss=rss,
                        limit=limit,
                    )
                    processes.signal_group(proc.pid, signal.SIGKILL)
                    self.kill_helpers()
            if self._stop.wait(SAMPLE_S):
                return proc.wait()

    def stop(self, grace: float = 5.0) -> None:
        with self._lock:
            self._stop.set()
            proc = self.proc
        self.kill_helpers()
        if proc is not None:
            processes.terminate(proc, grace)
        for t in self._threads:
            t.join(timeout=grace + 5)
        self.ready = False
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
        out = [h.pid for h in self.helpers if h.poll() is None]
        if self.proc is not None and self.proc.poll() is None:
            out.insert(0, self.proc.pid)
        return out

    # -- probes -----------------------------------------------------------------------------
    def _probe_loop(self) -> None:
        readiness, liveness = self.container.readiness, self.container.liveness
        fails = {"ready": 0, "live": 0}
        # Readiness is polled at most a second apart (it only decides where traffic goes); liveness
        # keeps its declared period, because it kills: a start slowed down by a CPU limit gets the
        # failureThreshold x periodSeconds a kubelet would give it.
        live_period = max(float((liveness or {}).get("periodSeconds", 10)), 0.1)
        last_live = 0.0
        while not self._stop.is_set():
            proc = self.proc
            alive = proc is not None and proc.poll() is None
            age = time.time() - self.started_at
            if not alive:
                self.ready = False
            elif readiness is None:
                self.ready = True
            elif age >= min(float(readiness.get("initialDelaySeconds", 0)), PERIOD_CAP_S):
                if self._probe(readiness):
                    fails["ready"] = 0
                    self.ready = True
                else:
                    fails["ready"] += 1
                    if not self.ready or fails["ready"] >= int(readiness.get("failureThreshold", 3)):
                        self.ready = False
            if (
                alive
                and liveness is not None
                and not self.suspended
                and age >= float(liveness.get("initialDelaySeconds", 0))
                and time.time() - max(last_live, self.started_at) >= live_period
            ):
                last_live = time.time()
                fails["live"] = 0 if self._probe(liveness) else fails["live"] + 1
                if fails["live"] >= int(liveness.get("failureThreshold", 3)):
                    fails["live"] = 0
                    self.inst.log.event(
                        "WARNING",
                        f"liveness probe of container {self.container.name} failed; killing it",
                        event="liveness_kill",
                    )
                    self.signal(signal.SIGKILL)
            period = float((readiness or liveness or {}).get("periodSeconds", 1))
            self._stop.wait(min(max(period, 0.1), PERIOD_CAP_S) if self.ready else 0.2)

    def _probe(self, probe: dict[str, Any]) -> bool:
        timeout = min(float(probe.get("timeoutSeconds", 1)), 1.0)
        if "httpGet" in probe:
            get = probe["httpGet"]
            port = self.inst.pod_port(self.inst.port_number(get.get("port")))
            path = str(get.get("path", "/"))
            try:
                r = requests.get(f"http://127.0.0.1:{port}{path}", timeout=timeout)
                return 200 <= r.status_code < 400
            except requests.RequestException:
                return False
        if "tcpSocket" in probe:
            port = self.inst.pod_port(self.inst.port_number(probe["tcpSocket"].get("port")))
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=timeout):
                    return True
            except OSError:
                return False
        if "exec" in probe:
            try:
                r = subprocess.run(
                    [str(a) for a in probe["exec"].get("command", [])],
                    cwd=self.launch.cwd,
                    env=self.launch.env,
                    capture_output=True,
                    timeout=timeout,
                    start_new_session=True,
                )
                return r.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                return False
        return True


@dataclass
class Instance:
    """A replica of a workload: its pod ports and one Runner per container."""

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

    def start(self, resolve: Callable[[str, int], int | None], environ: dict[str, str]) -> None:
        for c in self.containers:
            for _, number in c.ports:
                self.pod_port(number)
        for c in self.containers:
            cports = frozenset(n for _, n in c.ports)
            env = {k: environ[k] for k in BASE_ENV if k in environ}
            env.update(translate_env(dict(c.env), cports, self.pod_port, resolve))
            env.update({"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "HOSTNAME": self.id})
            argv = [sys.executable if a in PYTHONS and i == 0 else a for i, a in enumerate(c.command)]
            self.runners.append(Runner(self, c, Launch(argv, self.build_dir, env)))
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
        self.log.close()

    def record(self) -> dict[str, Any]:
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
