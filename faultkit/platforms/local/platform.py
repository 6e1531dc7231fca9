"""LocalPlatform: the Platform protocol, spoken to the supervisor daemon over its control API.

Builds and logs are plain files under the state folder, so those are handled here directly;
everything that touches running processes goes to the supervisor.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psutil
import requests

from faultkit import errors
from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.errors import PlatformError
from faultkit.platforms.base import AppStatus, Build, Instance, LogRecord, Platform
from faultkit.platforms.local import actions as act
from faultkit.platforms.local.builds import BuildStore
from faultkit.platforms.local.control import TOKEN_HEADER
from faultkit.platforms.local.logfiles import read_records, tail
from faultkit.platforms.local.processes import recorded_alive, signal_group, wait_gone
from faultkit.platforms.local.state import DAEMON_MODULE, LocalState
from faultkit.platforms.local.status import SupervisorStatus, typed_status
from faultkit.platforms.logline import log_source
from faultkit.platforms.service_url import outside_cluster
from faultkit.workspace import Workspace

ERRORS = {name: getattr(errors, name)
          for name in ("UsageError", "InputError", "PlatformError", "NotReady", "Unsupported")}


class LocalPlatform:
    """Runs an app's Kubernetes manifests as local processes (see DESIGN.md, "Platforms").

    The Platform protocol, with these local specifics:

    * `up(app, replicas=N)` runs N instances of every Deployment; replicas=0 keeps each
      manifest's count. A second `up` while a supervisor runs is refused.
    * Workloads are named `cart` or `Deployment/cart`; Services `Service/cart` (container "").
    * `patch_field` rolls the workload; when the new instances never get ready it leaves the new
      spec applied, stops the old instances anyway (no old replica keeps serving) and raises.
      `rollout` to a build that never gets ready rolls back and raises.
    * Actions: see `actions()`. Params: `instance` (an id) or `mode` ("one"/"all"; kill and
      failure default to one, stress to all), `workers` (cpu-stress), `mb` (memory-stress),
      `ms` (network-delay, added to each chunk the service sends back), `percent` (network-loss,
      share of new connections reset). Liveness probes pause while an instance is suspended.
    * Memory limits are enforced by sampling, CPU limits by a cgroup quota where the machine allows
      it (`supervisor_status()["cpu_limits"]` says which; see replicas.py and memory.py).
    * One site: `other_sites()` is empty; `prepare()` has nothing to start.

    Beyond the protocol: `supervisor_status()` (the supervisor's full record, which `status()`
    types), `pids(service=None)`, and `kill` (the instance-kill action's SIGKILL at once, kept for
    the contract test); the constructor takes `app` (used by `build` when nothing is up) and
    `environ` (the supervisor's environment).
    """

    name = "local"
    checks_in_build = False  # the validator runs them here, where the services run, before it builds

    def __init__(self, workspace: Workspace, app: str | None = None, environ: Mapping[str, str] = os.environ) -> None:
        self.workspace = workspace
        self.state = LocalState(workspace.state_dir)
        self.store = BuildStore(self.state.builds)
        self.default_app = app
        self.environ = environ
        self._scrapes: requests.Session | None = None
        self._app_descriptor: AppDescriptor | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def up(self, app: str, replicas: int = 1, timeout: float = 90.0) -> None:
        info = self.state.read_info()
        if info is not None:
            raise PlatformError(
                f"{info['app']} is already up on the local platform (supervisor pid "
                f"{info['pid']}); run `faultkit down` first"
            )
        load_app(self.workspace, app)  # a bad app name fails here, before anything starts
        self._clean_leftovers()
        self.state.base.mkdir(parents=True, exist_ok=True)
        self.state.pids.unlink(missing_ok=True)
        proc = self._start_supervisor(app, replicas)
        try:
            self._wait_ready(proc, timeout)
        except BaseException:
            self.down()
            raise

    def _start_supervisor(self, app: str, replicas: int) -> subprocess.Popen[bytes]:
        env = dict(self.environ)
        package_root = str(Path(__file__).resolve().parents[3])  # so `-m faultkit...` imports this copy
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        with open(self.state.supervisor_log, "ab") as log:
            return subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    DAEMON_MODULE,
                    "--root",
                    str(self.workspace.root),
                    "--state-dir",
                    str(self.workspace.state_dir),
                    "--app",
                    app,
                    "--replicas",
                    str(max(replicas, 0)),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                env=env,
                cwd=str(self.state.base),
            )

    def _wait_ready(self, proc: subprocess.Popen[bytes], timeout: float) -> None:
        deadline = time.time() + timeout
        while True:
            if proc.poll() is not None:
                last = " | ".join(tail(self.state.supervisor_log, 3)) or "no output"
                raise PlatformError(
                    f"the local supervisor exited with status {proc.returncode} ({last}); "
                    f"see {self.state.supervisor_log}"
                )
            if self.state.read_info() is not None:
                status = self.supervisor_status()
                if status["phase"] == "failed":
                    raise PlatformError(f"up failed: {status['error']}")
                waiting = [
                    s
                    for s, v in status["services"].items()
                    if not v["instances"] or not all(i["ready"] for i in v["instances"])
                ]
                if status["phase"] == "running" and not waiting:
                    return
                if time.time() > deadline:
                    raise PlatformError(self._not_ready_message(status, waiting, timeout))
            elif time.time() > deadline:
                raise PlatformError(
                    f"the local supervisor did not start within {timeout:g}s; see {self.state.supervisor_log}"
                )
            time.sleep(0.2)

    def _not_ready_message(self, status: SupervisorStatus, waiting: list[str], timeout: float) -> str:
        if status["phase"] != "running":
            return f"the app was still being deployed after {timeout:g}s ({status['phase']})"
        first = waiting[0]
        insts = status["services"][first]["instances"]
        lines = tail(self.state.logs / f"{insts[0]['id']}.log", 5) if insts else []
        return f"{', '.join(waiting)} did not become ready within {timeout:g}s; last lines of {first}'s log: " + (
            " | ".join(lines) if lines else "(empty)"
        )

    def down(self) -> str:
        info = self.state.read_info()
        if info is not None:
            try:
                self._call("shutdown", 10)
            except PlatformError:
                pass
            try:
                sup = psutil.Process(int(info["pid"]))
                if wait_gone([sup], 30):
                    sup.send_signal(signal.SIGKILL)
            except psutil.Error:
                pass
        self._clean_leftovers()
        self.state.remove_info()
        return "every process it started has exited"

    def _clean_leftovers(self) -> None:
        """Kill whatever the record says is still running (after a supervisor crash, say)."""
        alive = recorded_alive(self.state.pids)
        for p in alive:
            signal_group(p.pid, signal.SIGKILL)
        if wait_gone(alive, 15):
            raise PlatformError(f"processes {[p.pid for p in alive]} of the local platform would not exit")

    def prepare(self) -> None:
        """Nothing to start: the supervisor that `up` started carries out every action itself."""

    def is_up(self) -> bool:
        return self.state.read_info() is not None

    def target(self) -> dict[str, str]:
        """The one supervisor of this state folder: its app (the folder itself is where the journal is)."""
        return {"platform": self.name, "app": self.app()}

    def app(self) -> str:
        info = self.state.read_info()
        if info is None:
            raise PlatformError("nothing is up on the local platform; run `faultkit up` first")
        return str(info["app"])

    def _descriptor(self) -> AppDescriptor:
        """The running app's descriptor, read once per app (logs parse every window's lines with it)."""
        name = self.app()
        if self._app_descriptor is None or self._app_descriptor.name != name:
            self._app_descriptor = load_app(self.workspace, name)
        return self._app_descriptor

    # -- state ------------------------------------------------------------------------------
    def supervisor_status(self) -> SupervisorStatus:
        """The supervisor's record: phase, and per service its instances, build and endpoint."""
        status: SupervisorStatus = self._call("status")
        return status

    def status(self) -> AppStatus:
        if not self.is_up():
            alive = recorded_alive(self.state.pids)
            return AppStatus(self.name, None, leftovers=tuple(f"process {p.pid} of an earlier run" for p in alive))
        return typed_status(self.name, self.supervisor_status())

    def other_sites(self) -> dict[str, Platform]:
        return {}  # one supervisor runs one site

    def instances(self, service: str | None = None) -> list[Instance]:
        services = self.supervisor_status()["services"]
        if service is not None and service not in services:
            raise errors.InputError(f"{service!r} is not a service of the app on the local platform")
        return [
            Instance(
                id=i["id"],
                service=name,
                build=i["build"],
                ready=i["ready"],
                restarts=i["restarts"],
                oom_kills=i["oom_kills"],
                last_exit=i["last_exit"],
            )
            for name, v in services.items()
            if service in (None, name)
            for i in v["instances"]
        ]

    def ready(self, service: str) -> bool:
        insts = self.instances(service)
        return bool(insts) and all(i.ready for i in insts)

    def endpoint(self, service: str, port: int | None = None) -> str:
        return self._call("endpoint", service=service, port=port)

    def query_address(self, url: str, option: str = "the URL") -> str:
        return outside_cluster(url, self.name, option)

    def request_counts(self, service: str) -> dict[str, dict[str, float] | None]:
        """Each instance's cumulative requests by status, scraped from its own /metrics (None: no answer),
        as the descriptor's signals.requests names them (the local platform reads no Prometheus)."""
        from faultkit.platforms.counters import require_exposition, scrape

        signal = self._descriptor().signals.requests
        require_exposition(signal, "the local platform")
        if self._scrapes is None:
            self._scrapes = requests.Session()  # kept: a sample scrapes every instance each interval
        endpoints = self.instance_endpoints(service)
        return {iid: scrape(url, self._scrapes, signal) for iid, url in sorted(endpoints.items())}

    def signal_sources(self) -> dict[str, dict[str, object]]:
        """Request counts scraped from each instance's /metrics; logs from the instances' log files."""
        signal = self._descriptor().signals.requests
        return {"requests": {"kind": "scrape", "signal": signal.kind, "endpoint": "/metrics", "metric": signal.metric},
                "logs": log_source("files", self._descriptor().log_format)}

    def telemetry_scope(self) -> dict[str, str]:
        """Nothing: the local instances report no resource label of their own."""
        return {}

    def instance_endpoints(self, service: str) -> dict[str, str]:
        """Each instance's own address (its first containerPort), e.g. to scrape its /metrics."""
        return self._call("instance_endpoints", service=service)

    def pids(self, service: str | None = None) -> dict[str, list[int]]:
        """The live pids of each instance (its container processes and attached helpers)."""
        services = self.supervisor_status()["services"]
        return {i["id"]: i["pids"] for name, v in services.items() if service in (None, name) for i in v["instances"]}

    # -- builds and rollouts ----------------------------------------------------------------
    def build(self, service: str, source_root: str | None = None) -> Build:
        app = load_app(self.workspace, self._app_name())
        spec = app.service(service)
        if spec.source is None or app.source_dir is None:
            raise errors.Unsupported(
                f"service {service!r} has no source in {app.name}'s app.yaml; the local "
                "platform cannot build it (use the docker or kubernetes platform)"
            )
        root = Path(source_root) if source_root is not None else app.source_dir
        return self.store.build(service, root, spec.source, app.common)

    def build_contains(self, build_id: str, text: str) -> bool:
        return self.store.contains(build_id, text)

    def builds(self, service: str) -> list[Build]:
        return self.store.builds(service)

    def rollout(self, service: str, build_id: str, timeout: float = 60.0) -> None:
        self._call("rollout", timeout + 30, service=service, build_id=build_id, timeout=timeout)

    # -- manifest settings ------------------------------------------------------------------
    def read_field(self, workload: str, container: str, path: str) -> str | None:
        return self._call("read_field", workload=workload, container=container, path=path)

    def patch_field(self, workload: str, container: str, path: str, value: str | None, timeout: float = 60.0) -> None:
        self._call(
            "patch_field",
            timeout + 30,
            workload=workload,
            container=container,
            path=path,
            value=value,
            timeout=timeout,
        )

    # -- observation ------------------------------------------------------------------------
    def logs(self, service: str, since: float, until: float | None = None) -> list[LogRecord]:
        out: list[LogRecord] = []
        for path in sorted(self.state.logs.glob(f"{service}-*.log")):
            instance = path.stem
            if not instance.removeprefix(f"{service}-").isdigit():
                continue
            out.extend(read_records(path, service, instance, since, until, self._descriptor().log_format))
        return sorted(out, key=lambda r: r.ts)

    # -- direct interventions ---------------------------------------------------------------
    def actions(self) -> frozenset[str]:
        return act.SUPPORTED

    def start_action(self, action: str, service: str, params: dict[str, object], mode: str | None = None) -> str:
        if action not in act.SUPPORTED:
            raise act.unsupported(action)
        if mode is not None:
            if mode not in ("one", "all"):
                raise errors.InputError(f"action mode {mode!r}: use one or all")
            params = {**params, "mode": mode}
        return self._call("start_action", action=action, service=service, params=params)

    def stop_action(self, handle: str) -> None:
        self._call("stop_action", handle=handle)

    def action_leftovers(self, handle: str) -> list[str]:
        """What a stopped action left behind, read back by the supervisor; [] when nothing remains."""
        return list(self._call("action_leftovers", handle=handle))

    def active_actions(self) -> list[str]:
        """Handles of the actions in force, so recovery can stop one whose handle was never recorded."""
        return list(self.supervisor_status()["actions"])

    # -- plumbing ---------------------------------------------------------------------------
    def _app_name(self) -> str:
        info = self.state.read_info()
        if info is not None:
            return str(info["app"])
        if self.default_app:
            return self.default_app
        raise PlatformError("nothing is up on the local platform and no app was given; run `faultkit up` first")

    def _call(self, method: str, wait: float = 30.0, /, **args: Any) -> Any:
        info = self.state.read_info()
        if info is None:
            raise PlatformError("nothing is up on the local platform; run `faultkit up` first")
        try:
            r = requests.post(
                f"http://127.0.0.1:{info['port']}/call",
                json={"method": method, "args": args},
                headers={TOKEN_HEADER: info["token"]},
                timeout=wait,
            )
            body = r.json()
        except (requests.RequestException, ValueError):
            raise PlatformError(
                f"the local platform's supervisor (pid {info['pid']}) is not answering "
                f"{method}; see {self.state.supervisor_log}, or run `faultkit down`"
            ) from None
        if body.get("ok"):
            return body.get("result")
        raise ERRORS.get(body.get("kind"), PlatformError)(body.get("message", "unknown supervisor error"))
