"""FakePlatform: faultkit.platforms.base.Platform in memory (or in one state file), for pure tests.

It models an application from its real descriptor and manifests: services and their workloads,
settings read back from the deployed manifests (patched in place, never the repository's files),
builds as content ids over the service's source (kept as folders so `build_contains` reads real
files), instances with restarts, rollouts that start a full set of new instances and then drop every
old one, actions under handles, request counts and logs. A load generator is simulated: each ready
instance serves RATE requests a second, answered 500 in the share the behaviour table says
(behaviour.py); the same table decides what a real request to `endpoint()` gets.

With `state_file`, the state lives in that file (under the workspace's state folder), so one
process can be SIGKILLed mid-validation and another recover from what it left; `rollout_s` makes
a rollout last that long between starting the new instances and dropping the old, so a kill can
land in the middle of one.
"""

from __future__ import annotations

import copy
import hashlib
import math
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from faultkit.apps import manifests
from faultkit.apps.descriptor import load_app
from faultkit.apps.sources import source_files
from faultkit.errors import InputError, NotReady, PlatformError, Unsupported
from faultkit.platforms.base import AppStatus, Build, Instance, LogRecord, Platform, ServiceState, short_id
from faultkit.platforms.service_url import outside_cluster
from faultkit.workspace import Workspace
from tests.fakes.behaviour import ActionOn, Behaviour, BuildHas, Setting
from tests.fakes.server import Listener
from tests.fakes.store import State, Store, empty

RATE = 5.0  # simulated requests a second per ready instance
ACTIONS = frozenset({"instance-kill", "instance-failure", "cpu-stress", "memory-stress", "network-delay",
                     "network-loss"})
LOG_EVERY_S = 0.5  # an active effect's log line, at most this often


class FakePlatform:
    name = "fake"
    checks_in_build = False  # the validator runs them on this machine, as with the local platform

    def __init__(self, workspace: Workspace, state_file: Path | None = None,
                 behaviours: Sequence[Behaviour] | None = None, rollout_s: float | None = None,
                 clock: Callable[[], float] = time.time, scope: dict[str, str] | None = None) -> None:
        self.workspace = workspace
        # what telemetry_scope() gives: the instance's resource attributes (on a cluster, its namespace)
        self.scope = dict(scope or {})
        self.state_file = state_file
        self.store = Store(state_file)
        self.clock = clock
        self.builds_dir = (state_file.parent if state_file else workspace.state_dir) / "fake-builds"
        self._listener: Listener | None = None
        self._contains: dict[tuple[str, str], bool] = {}
        if behaviours is not None or rollout_s is not None:
            with self.store.change() as s:
                if behaviours is not None:
                    s["behaviours"] = [b.to_json() for b in behaviours]
                if rollout_s is not None:
                    s["rollout_s"] = rollout_s

    # -- lifecycle --------------------------------------------------------------------------
    def up(self, app: str, replicas: int = 1, timeout: float = 90.0) -> None:
        desc = load_app(self.workspace, app)
        docs = [{"kind": d.kind, "name": d.name, "body": d.body} for d in manifests.load_manifests(desc.manifests_dir)]
        with self.store.change() as s:
            kept = {k: s[k] for k in ("behaviours", "rollout_s")}
            s.clear()
            # the manifest as shipped, apart from the deployed copy patches change: what a Setting compares with
            s.update({**empty(), **kept, "app": app, "docs": docs, "manifest": copy.deepcopy(docs),
                      "tick": self.clock(), "load": list(desc.load)})
            s["services"] = {sp.name: {"workload": sp.workload, "containers": list(sp.containers)}
                             for sp in desc.services}
        for spec in desc.services:
            build = self.build(spec.name).id if spec.source else _digest_of(spec.name)  # no source: a name
            with self.store.change() as s:
                s["builds"].setdefault(spec.name, [build])
                self._start(s, spec.name, build, self._replicas(s, spec.name))

    def prepare(self) -> None:
        """Nothing to start: the fake's actions need no agent."""

    def down(self) -> str:
        with self.store.change() as s:
            kept = {k: s[k] for k in ("behaviours", "rollout_s")}
            s.clear()
            s.update({**empty(), **kept})
        shutil.rmtree(self.builds_dir, ignore_errors=True)
        self.close()
        return "the fake app is down"

    def close(self) -> None:
        """Stop this process's HTTP listener; the state stays (another process may go on with it)."""
        if self._listener:
            self._listener.close()
            self._listener = None

    def is_up(self) -> bool:
        return self.store.read()["app"] is not None

    def app(self) -> str:
        app = self.store.read()["app"]
        if app is None:
            raise PlatformError("nothing is up on the fake platform; call up() first")
        return str(app)

    def target(self) -> dict[str, str]:
        return {"platform": self.name, "state": str(self.state_file) if self.state_file else f"memory-{id(self)}"}

    # -- state --------------------------------------------------------------------------------
    def instances(self, service: str | None = None) -> list[Instance]:
        with self.store.change() as s:
            self._tick(s)
            unready = self._unready(s)
            return [Instance(i["id"], i["service"], i["build"], i["ready"] and i["service"] not in unready,
                             i["restarts"], i["oom_kills"], i["last_exit"])
                    for i in s["instances"] if service in (None, i["service"])]

    def status(self) -> AppStatus:
        if not self.is_up():
            return AppStatus(self.name, None)
        insts = self.instances()
        services = {svc: ServiceState(build=next((i.build for i in mine), None), endpoint=self.endpoint(svc),
                                      instances=tuple(mine))
                    for svc in sorted({i.service for i in insts}) for mine in [[i for i in insts if i.service == svc]]}
        return AppStatus(self.name, self.app(), where="on the fake platform", services=services)

    def instance_endpoints(self, service: str) -> dict[str, str]:
        return {i.id: self.endpoint(service) for i in self.instances(service)}  # one listener answers for all

    def other_sites(self) -> Mapping[str, Platform]:
        return {}

    def ready(self, service: str) -> bool:
        insts = self.instances(service)
        return bool(insts) and all(i.ready for i in insts)

    def query_address(self, url: str, option: str = "the URL") -> str:
        return outside_cluster(url, self.name, option)

    def endpoint(self, service: str, port: int | None = None) -> str:
        self._service(self.store.read(), service)
        if self._listener is None:
            self._listener = Listener(self._answer)
        return self._listener.url(service)

    # -- builds and rollouts ------------------------------------------------------------------
    def build(self, service: str, source_root: str | None = None) -> Build:
        desc = load_app(self.workspace, self.app())
        spec = desc.service(service)
        root = Path(source_root) if source_root else desc.source_dir
        if spec.source is None or root is None:
            raise Unsupported(f"service {service!r} has no source in {desc.name}'s app.yaml; nothing to build")
        files = source_files(root, spec.source, desc.common)
        build_id = "sha256:" + _digest(files)
        folder = self.builds_dir / build_id.removeprefix("sha256:")
        if not folder.exists():
            tmp = folder.with_name(folder.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            for rel, path in files:
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, tmp / rel)
            tmp.replace(folder)
        with self.store.change() as s:
            known = s["builds"].setdefault(service, [])
            if build_id not in known:
                known.append(build_id)
            s["build_dirs"][build_id] = str(folder)
        return Build(build_id, service, str(folder))

    def build_contains(self, build_id: str, text: str) -> bool:
        return self._has_text(self.store.read()["build_dirs"], build_id, text)

    def _has_text(self, build_dirs: dict[str, str], build_id: str, text: str) -> bool:
        if (build_id, text) not in self._contains:
            folder = build_dirs.get(build_id)
            if folder is None:
                raise PlatformError(f"no build {short_id(build_id)} on the fake platform")
            self._contains[(build_id, text)] = any(
                text.encode() in p.read_bytes() for p in Path(folder).rglob("*") if p.is_file())
        return self._contains[(build_id, text)]

    def builds(self, service: str) -> list[Build]:
        s = self.store.read()
        return [Build(b, service, s["build_dirs"].get(b, "")) for b in s["builds"].get(service, [])]

    def rollout(self, service: str, build_id: str, timeout: float = 60.0) -> None:
        s = self.store.read()
        self._service(s, service)
        if build_id not in s["builds"].get(service, []):
            raise PlatformError(f"no build {short_id(build_id)} of {service} on the fake platform")
        self._roll(service, build_id, keep_on_failure=False)

    def _roll(self, service: str, build_id: str | None, keep_on_failure: bool) -> None:
        """Start a full set of new instances beside the old, then drop every old one (or the new)."""
        with self.store.change() as s:
            old = [i["id"] for i in s["instances"] if i["service"] == service]
            build = build_id or next(i["build"] for i in s["instances"] if i["service"] == service)
            new = self._start(s, service, build, self._replicas(s, service))
            s["rolling"] = {"service": service, "build": build, "old": old, "new": new}
            wait = float(s["rollout_s"])
        time.sleep(wait)  # a kill here leaves old and new side by side, as on a real platform
        with self.store.change() as s:
            s["rolling"] = None
            failed = service in self._unready(s)
            drop = new if failed and not keep_on_failure else old
            s["instances"] = [i for i in s["instances"] if i["id"] not in drop]
        if failed:
            then = "the new spec stays applied" if keep_on_failure else "rolled back"
            raise NotReady(f"rollout of {service} to build {short_id(build)} did not become ready; {then}")

    # -- manifest settings -----------------------------------------------------------------------
    def read_field(self, workload: str, container: str, path: str) -> str | None:
        return manifests.get_field(manifests.find_container(_docs(self.store.read()["docs"]), _bare(workload),
                                                            container), path)

    def patch_field(self, workload: str, container: str, path: str, value: str | None,
                    timeout: float = 60.0) -> None:
        workload = _bare(workload)
        with self.store.change() as s:
            docs = _docs(s["docs"])
            manifests.find_container(docs, workload, container)  # the usual error when absent
            doc = next(d for d in s["docs"] if d["name"] == workload and d["kind"] in manifests.WORKLOAD_KINDS)
            spec = manifests.pod_spec(doc["body"])
            spec["containers"] = [manifests.set_field(c, path, value) if c.get("name") == container else c
                                  for c in spec["containers"]]
            services = [n for n, v in s["services"].items() if v["workload"] == workload]
        for service in services:
            self._roll(service, None, keep_on_failure=True)

    # -- observation -----------------------------------------------------------------------------
    def logs(self, service: str, since: float, until: float | None = None) -> list[LogRecord]:
        with self.store.change() as s:
            self._tick(s)
            return [LogRecord(r["ts"], r["service"], r["instance"], r["level"], r["message"])
                    for r in s["logs"] if r["service"] == service and r["ts"] >= since
                    and (until is None or r["ts"] <= until)]

    def signal_sources(self) -> dict[str, dict[str, object]]:
        return {"requests": {"kind": "simulated", "metric": "requests by status"},
                "logs": {"source": "memory", "format": "json"}}

    def telemetry_scope(self) -> dict[str, str]:
        return dict(self.scope)

    def request_counts(self, service: str) -> dict[str, dict[str, float] | None]:
        with self.store.change() as s:
            self._tick(s)
            unready = service in self._unready(s)
            return {i["id"]: None if unready else dict(s["counts"].get(i["id"], {}))
                    for i in s["instances"] if i["service"] == service}

    # -- direct interventions ----------------------------------------------------------------------
    def actions(self) -> frozenset[str]:
        return ACTIONS

    def start_action(self, action: str, service: str, params: dict[str, object], mode: str | None = None) -> str:
        if action not in ACTIONS:
            raise Unsupported(f"action {action!r} cannot be carried out on the fake platform (it supports "
                              f"{', '.join(sorted(ACTIONS))})")
        if mode not in (None, "one", "all"):
            raise InputError(f"action mode {mode!r}: use one or all")
        with self.store.change() as s:
            self._service(s, service)
            self._tick(s)
            handle = f"{action}-{service}-{s['next_handle']}"
            s["next_handle"] += 1
            s["actions"][handle] = {"action": action, "service": service, "params": params, "mode": mode}
            if action == "instance-kill":
                self._kill(s, service, None)
        return handle

    def stop_action(self, handle: str) -> None:
        with self.store.change() as s:
            self._tick(s)
            s["actions"].pop(handle, None)

    def action_leftovers(self, handle: str) -> list[str]:
        """What of the action is still in force: the fake's actions are its records, nothing else."""
        return [f"action {handle} still in force"] if handle in self.store.read()["actions"] else []

    def active_actions(self) -> list[str]:
        return sorted(self.store.read()["actions"])

    # -- the model ---------------------------------------------------------------------------------
    def _service(self, s: State, service: str) -> dict[str, Any]:
        if s["app"] is None:
            raise PlatformError("nothing is up on the fake platform; call up() first")
        if service not in s["services"]:
            raise InputError(f"{service!r} is not a service of {s['app']}")
        found: dict[str, Any] = s["services"][service]
        return found

    def _replicas(self, s: State, service: str) -> int:
        workload = s["services"][service]["workload"]
        doc = next(d for d in s["docs"] if d["name"] == workload and d["kind"] in manifests.WORKLOAD_KINDS)
        return int(doc["body"].get("spec", {}).get("replicas", 1))

    def _start(self, s: State, service: str, build: str, count: int) -> list[str]:
        ids = []
        for _ in range(count):
            n = s["next_instance"].get(service, 0)
            s["next_instance"][service] = n + 1
            iid = f"{service}-{n}"
            s["instances"].append({"id": iid, "service": service, "build": build, "ready": True, "restarts": 0,
                                   "oom_kills": 0, "last_exit": None})
            self._log(s, service, iid, "INFO", f"started build {short_id(build)}")
            ids.append(iid)
        return ids

    def _kill(self, s: State, service: str, instance: str | None) -> str:
        insts = [i for i in s["instances"] if i["service"] == service and instance in (None, i["id"])]
        if not insts:
            raise PlatformError(f"no instance {instance or ''} of {service} on the fake platform")
        victim = insts[0]
        victim["restarts"] += 1
        victim["last_exit"] = 137
        self._log(s, service, victim["id"], "WARNING", "exited (exit 137); restarted")
        return str(victim["id"])

    def _log(self, s: State, service: str, instance: str, level: str, message: str) -> None:
        s["logs"].append({"ts": self.clock(), "service": service, "instance": instance, "level": level,
                          "message": message})

    def _active(self, s: State) -> list[Behaviour]:
        return [b for b in (Behaviour.from_json(d) for d in s["behaviours"]) if self._triggered(s, b)]

    def _triggered(self, s: State, b: Behaviour) -> bool:
        w = b.when
        if isinstance(w, Setting):
            docs, manifest = _docs(s["docs"]), _docs(s["manifest"])
            return bool(manifests.get_field(manifests.find_container(docs, w.workload, w.container), w.path)
                        != manifests.get_field(manifests.find_container(manifest, w.workload, w.container), w.path))
        if isinstance(w, BuildHas):
            return any(self._has_text(s["build_dirs"], i["build"], w.text) for i in s["instances"]
                       if i["service"] == w.service and i["build"] in s["build_dirs"])
        assert isinstance(w, ActionOn)
        return any(a["action"] == w.action and a["service"] == w.service for a in s["actions"].values())

    def _unready(self, s: State) -> set[str]:
        return {b.service for b in self._active(s) if b.unready}

    def _tick(self, s: State) -> None:
        """Advance the simulated load to now: requests, effects beginning (restarts), log lines."""
        now = self.clock()
        dt = max(0.0, now - (s["tick"] or now))
        s["tick"] = now
        active = self._active(s)
        keys = [b.key() for b in active]
        for b in active:
            if b.restarts and b.key() not in s["effects_on"]:
                for i in s["instances"]:
                    if i["service"] == b.service:
                        i["restarts"] += 1
                        i["last_exit"] = 1
                        self._log(s, b.service, i["id"], "ERROR", "exited (exit 1); restarted")
        s["effects_on"] = keys
        share = _shares(active)
        unready = {b.service for b in active if b.unready}
        for i in s["instances"]:
            if i["service"] in s.get("load", []) or i["service"] in unready or not i["ready"]:
                continue
            n, p = RATE * dt, share.get(i["service"], 0.0)
            counts = s["counts"].setdefault(i["id"], {})
            counts["200"] = counts.get("200", 0.0) + n * (1 - p)
            if p:
                counts["500"] = counts.get("500", 0.0) + n * p
        logged = s.setdefault("logged", {})
        for b in active:
            if b.log and now - logged.get(b.key(), 0.0) >= LOG_EVERY_S:
                logged[b.key()] = now
                for i in s["instances"]:
                    if i["service"] == b.service:
                        self._log(s, b.service, i["id"], "ERROR", b.log)

    def _answer(self, service: str, path: str) -> int:
        """A real request's status (the HTTP listener's), counted on the instance that served it."""
        with self.store.change() as s:
            if service not in s.get("services", {}):
                return 404
            self._tick(s)
            active = self._active(s)
            if service in {b.service for b in active if b.unready}:
                return 503
            ready = [i for i in s["instances"] if i["service"] == service and i["ready"]]
            if not ready:
                return 503
            n = s["served"].get(service, 0)
            s["served"][service] = n + 1
            p = _shares(active, path).get(service, 0.0)
            status = "500" if math.floor((n + 1) * p) > math.floor(n * p) else "200"
            counts = s["counts"].setdefault(ready[n % len(ready)]["id"], {})
            counts[status] = counts.get(status, 0.0) + 1
            return int(status)


def _shares(active: list[Behaviour], path: str | None = None) -> dict[str, float]:
    """The share of 500s each service answers: on `path` (a real request), or on no path (the load)."""
    out: dict[str, float] = {}
    for b in active:
        if b.path is None or (path is not None and path.startswith(b.path)):
            out[b.service] = max(out.get(b.service, 0.0), b.errors)
    return out


def _docs(raw: list[dict[str, Any]]) -> list[manifests.Doc]:
    return [manifests.Doc(d["kind"], d["name"], d["body"], Path(f"{d['kind']}-{d['name']}.yaml"), 1) for d in raw]


def _bare(workload: str) -> str:
    kind, sep, name = workload.partition("/")
    return name if sep and kind in manifests.WORKLOAD_KINDS else workload


def _digest(files: list[tuple[str, Path]]) -> str:
    h = hashlib.sha256()
    for rel, path in files:
        data = path.read_bytes()
        h.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def _digest_of(name: str) -> str:
    return "sha256:" + hashlib.sha256(name.encode()).hexdigest()
