"""Run (or resume) a campaign: N instances, one worker thread each, one shared queue.

Resume first undoes what a killed campaign left on every instance (`faultkit recover` from that
instance's journal), then settles each fault the kill caught running: a run that sealed its bundle
and recorded its verdict in the entry is taken as it is (it is not validated twice); any other is
moved aside to DIR/abandoned/ and its fault queued again (no verdict from a half-run). Before each
fault a worker checks its instance: one that is not up, runs another app, or has a service not
ready is rebuilt (down, then up), never reused.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from faultkit.campaigns.board import Board
from faultkit.campaigns.instances import AppInstance, instances
from faultkit.campaigns.plan import PLAN, Plan, PlannedFault
from faultkit.campaigns.state import VERDICTS, Attempt, FaultState, FaultStore, locked
from faultkit.campaigns.worker import RunResult, brief, newest_run, run_fault, sealed_verdict
from faultkit.errors import FaultkitError, PlatformError
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write

EVENTS = "events.jsonl"
SESSIONS = "sessions.json"
INSTANCE_FAILURES = 2  # an instance that cannot be brought up twice in a row retires its worker


@dataclass
class Queue:
    items: deque[PlannedFault] = field(default_factory=deque)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> PlannedFault | None:
        with self.lock:
            return self.items.popleft() if self.items else None

    def put(self, fault: PlannedFault) -> None:
        with self.lock:
            self.items.append(fault)


class Campaign:
    def __init__(self, ws: Workspace, folder: Path, plan: Plan, board: Board, stop: threading.Event,
                 keep_up: bool = False) -> None:
        self.ws, self.folder, self.plan, self.board, self.stop = ws, folder, plan, board, stop
        self.keep_up = keep_up
        self.store = FaultStore(folder)
        self.queue = Queue()
        self.lock = threading.Lock()
        self.instances = instances(ws, folder, plan.app, plan.workers, plan.platform, plan.namespaces)
        self.session: dict[str, Any] = {}
        self.retired: list[str] = []

    # ------------------------------------------------------------------ records

    def rel(self, path: Path) -> str:
        return path.resolve().relative_to(self.folder.resolve()).as_posix()

    def event(self, kind: str, instance: int | None, detail: str, seconds: float | None = None) -> None:
        record: dict[str, Any] = {"t": round(time.time(), 3), "kind": kind, "instance": instance, "detail": detail}
        if seconds is not None:
            record["seconds"] = round(seconds, 1)
        with self.lock:
            with open(self.folder / EVENTS, "a", encoding="utf-8") as f:
                f.write(json.dumps(record, sort_keys=True) + "\n")
        self.board.event(f"{kind}{'' if instance is None else f' [{instance}]'}: {detail}")

    def heartbeat(self) -> None:
        """Each session's span, so total wall time survives a kill (the last heartbeat ends it)."""
        with self.lock:
            path = self.folder / SESSIONS
            sessions = json.loads(path.read_text("utf-8")) if path.exists() else []
            self.session["last"] = round(time.time(), 3)
            if sessions and sessions[-1].get("started") == self.session["started"]:
                sessions[-1] = dict(self.session)
            else:
                sessions.append(dict(self.session))
            atomic_write(path, json.dumps(sessions, indent=1) + "\n")

    # ------------------------------------------------------------------ resume

    def resume(self) -> None:
        for inst in self.instances:
            if (inst.state_dir / "journal.json").exists():
                for line in inst.recover():
                    self.event("recovered", inst.index, line)
        for s in self.store.all(tuple(f.id for f in self.plan.faults)):
            if s.state == "running":
                self.settle(s)

    def settle(self, s: FaultState) -> None:
        bundles = self.folder / s.bundles if s.bundles else None
        run = newest_run(bundles, s.started) if bundles else None
        verdict = sealed_verdict(run)
        worker = s.worker if s.worker is not None else -1
        if run is not None and verdict is not None and self.recorded(s.id, run, str(verdict.get("status"))):
            attempt = Attempt(str(verdict["status"]), self.rel(run), "finished before the campaign stopped", worker,
                              round(max(0.0, run.stat().st_mtime - (s.started or run.stat().st_mtime)), 1))
            self.store.finish(s, attempt, brief(verdict), self.plan.attempts)
            self.event("settled", s.worker, f"{s.id}: {verdict['status']} (finished before the stop)")
            return
        moved = self.move_aside(s.id, run) if run is not None else None
        self.store.requeue(s, Attempt("interrupted", moved, "the campaign stopped during this run", worker, 0.0))
        self.event("requeued", s.worker, f"{s.id}: its run was cut short; validated again")

    def recorded(self, fault_id: str, run: Path, status: str) -> bool:
        """A verdict stands once validate wrote it into the entry (it does so last, after the seal)."""
        if status not in VERDICTS:
            return True  # no record to wait for: the run ended as an error to retry
        path = self.ws.catalog_dir / self.plan.app / f"{fault_id}.yaml"
        try:
            record = (yaml.safe_load(path.read_text("utf-8")) or {}).get("validation") or {}
        except (OSError, yaml.YAMLError):
            return False
        named = Path(str(record.get("bundle", "")))
        named = named if named.is_absolute() else self.ws.root / named
        return named.resolve() == run.resolve()

    def move_aside(self, fault_id: str, run: Path) -> str:
        target = self.folder / "abandoned" / fault_id / run.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(run), str(target))
        return self.rel(target)

    # ------------------------------------------------------------------ run

    def run(self) -> None:
        with locked(self.folder):
            if not (self.folder / PLAN).exists():
                self.plan.write(self.folder)
            self.session = {"started": round(time.time(), 3), "workers": self.plan.workers}
            self.heartbeat()
            self.resume()
            states = {s.id: s for s in self.store.all(tuple(f.id for f in self.plan.faults))}
            for f in self.plan.faults:
                if states[f.id].state != "done":
                    self.queue.put(f)
                    self.store.write(states[f.id])  # every fault has a state file from the start
            self.board.done = len(self.plan.faults) - len(self.queue.items)
            self.board.remaining = {f.id for f in self.queue.items}
            threads = [threading.Thread(target=self.work, args=(i,), name=f"worker-{i.index}", daemon=True)
                       for i in self.instances]
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():
                    t.join(0.5)
            self.heartbeat()
            if not self.keep_up:
                for inst in self.instances:
                    try:
                        inst.down()
                    except PlatformError as e:
                        self.event("down-failed", inst.index, str(e))
        if self.queue.items and not self.stop.is_set():
            raise PlatformError(f"{self.folder}: no instance could run the remaining {len(self.queue.items)} faults "
                                f"({'; '.join(self.retired)}); fix it, then `faultkit campaign run --resume "
                                f"{self.folder}`")

    def work(self, inst: AppInstance) -> None:
        failures = 0
        while not self.stop.is_set():
            if not self.queue.items:
                break
            self.board.worker(inst.index, None, "checking the instance")
            try:
                self.ready(inst)
                failures = 0
            except FaultkitError as e:
                failures += 1
                self.event("instance-failed", inst.index, str(e))
                if failures >= INSTANCE_FAILURES:
                    self.retired.append(f"instance {inst.index}: {e}")
                    break
                continue
            fault = self.queue.take()
            if fault is None:
                break
            self.one(inst, fault)
        self.board.worker(inst.index, None, "stopped" if self.stop.is_set() else "done")

    def ready(self, inst: AppInstance) -> None:
        health = inst.health()
        if health.ok:
            return
        started = time.time()
        if health.detail == "not up":  # nothing of an earlier run left (else the detail says what)
            self.board.worker(inst.index, None, "bringing the app up")
            inst.state_dir.mkdir(parents=True, exist_ok=True)
            inst.up()
            self.event("up", inst.index, f"{self.plan.app} up", time.time() - started)
            return
        self.board.worker(inst.index, None, f"rebuilding ({health.detail})")
        inst.rebuild()
        self.event("rebuilt", inst.index, health.detail, time.time() - started)

    def one(self, inst: AppInstance, fault: PlannedFault) -> None:
        s = self.store.read(fault.id)
        bundles = self.folder / "bundles" / fault.id
        s = self.store.start(s, inst.index, self.rel(bundles), time.time())
        self.board.worker(inst.index, fault.id, "starting")
        result = run_fault(inst, self.plan, fault, bundles, self.folder / "logs", self.board, self.stop)
        self.record(s, inst, fault, result)

    def record(self, s: FaultState, inst: AppInstance, fault: PlannedFault, result: RunResult) -> None:
        bundle = None
        if result.bundle is not None:
            # an unsealed folder is no evidence of anything: it never stays beside the verdicts
            sealed = (result.bundle / "MANIFEST.json").is_file()
            bundle = self.rel(result.bundle) if sealed else self.move_aside(fault.id, result.bundle)
        attempt = Attempt(result.outcome, bundle, result.detail, inst.index, result.wall_s)
        if result.outcome == "interrupted":
            self.store.requeue(s, attempt)
            self.board.finished(fault, result.outcome, result.wall_s, final=False)
            return
        done = self.store.finish(s, attempt, result.verdict, self.plan.attempts)
        final = done.state == "done"
        self.board.finished(fault, result.outcome, result.wall_s, final=final)
        if not final:
            self.queue.put(fault)
            self.event("retry", inst.index, f"{fault.id}: {result.outcome} ({result.detail[:160]})")
        else:
            self.event("done", inst.index, f"{fault.id}: {result.outcome} in {result.wall_s:.0f}s")
        self.heartbeat()
