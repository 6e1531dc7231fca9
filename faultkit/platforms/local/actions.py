"""Direct actions on the local platform: what it can do without Chaos Mesh, and what it cannot.

`ActionExecutor` carries them out on the replicas the kubelet runs and the relays the proxy
keeps, and remembers each one in force (`ActiveAction`) so that it can be reverted by its handle.
"""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from faultkit.errors import InputError, PlatformError, Unsupported
from faultkit.platforms.local import leftovers
from faultkit.platforms.local.processes import Spawner
from faultkit.platforms.local.relay import Relay
from faultkit.platforms.local.replicas import Replica, ReplicaTable, Runner
from faultkit.platforms.params import int_param

SUPPORTED = frozenset(
    {
        "instance-kill",
        "instance-failure",
        "cpu-stress",
        "memory-stress",
        "network-delay",
        "network-loss",
    }
)

# A shell loop, not a Python one: a worker holds under 1 MiB, where an interpreter holds about
# 10 MiB, and the workers count against the target's memory limit like stress-ng's would.
CPU_HOG = ["sh", "-c", "while :; do :; done"]
# Allocate in 16 MiB steps (touched, so resident), then hold it; like stress-ng's vm worker.
MEMORY_HOG = (
    "import sys, time\n"
    "mb = int(sys.argv[1]); held = []\n"
    "while len(held) * 16 < mb:\n"
    "    held.append(b'\\x01' * (min(16, mb - len(held) * 16) * 1048576)); time.sleep(0.02)\n"
    "while True:\n"
    "    time.sleep(3600)\n"
)


def unsupported(action: str) -> Unsupported:
    return Unsupported(
        f"action {action!r} cannot be carried out on the local platform (it supports "
        f"{', '.join(sorted(SUPPORTED))}); use the kubernetes platform (Chaos Mesh)"
    )


def helper_argv(action: str, params: dict[str, Any]) -> tuple[list[str], int]:
    """(argv of one helper process, how many to attach to each instance)."""
    if action == "cpu-stress":
        return list(CPU_HOG), int_param(params, action, "workers")
    mb = int_param(params, action, "mb")
    return [sys.executable, "-c", MEMORY_HOG, str(mb)], 1


@dataclass
class ActiveAction:
    handle: str
    action: str
    service: str
    instances: list[str]
    runners: list[Runner] = field(default_factory=list)
    helpers: list[tuple[Runner, subprocess.Popen[bytes]]] = field(default_factory=list)
    relays: list[tuple[Relay, float, float]] = field(default_factory=list)  # (relay, delay, loss) before

    def revert(self) -> None:
        if self.action == "instance-failure":
            for r in self.runners:
                r.suspended = False
                r.signal(signal.SIGCONT)
        for runner, helper in self.helpers:
            runner.kill_helpers(only=[helper])
        for relay, delay, loss in self.relays:
            relay.delay_s, relay.loss = delay, loss

    def leftovers(self) -> list[str]:
        """What of this action the machine still shows, read back (empty: nothing remains)."""
        out = leftovers.process_leftovers(self.handle)
        if self.action == "instance-failure":
            out += leftovers.frozen_leftovers((r.replica.id, r.proc.pid) for r in self.runners if r.proc is not None)
        out += [f"relay {relay.service}:{relay.port} still delays {relay.delay_s:g}s / drops {relay.loss:.0%}"
                for relay, delay, loss in self.relays if (relay.delay_s, relay.loss) != (delay, loss)]
        return out


def pick(instances: list[Replica], params: dict[str, Any], default_mode: str) -> list[Replica]:
    wanted = params.get("instance")
    if wanted:
        chosen = [i for i in instances if i.id == wanted]
        if not chosen:
            raise InputError(f"instance {wanted!r} is not running; running: {[i.id for i in instances]}")
        return chosen
    mode = str(params.get("mode", default_mode))
    if mode not in ("one", "all"):
        raise InputError(f"action parameter 'mode': expected 'one' or 'all', got {mode!r}")
    ordered = sorted(instances, key=lambda i: (not i.ready, i.id))
    return ordered[:1] if mode == "one" else ordered


class ActionExecutor:
    """Starts and stops direct actions; `relays_of(workload)` are the relays network actions act on."""

    def __init__(self, table: ReplicaTable, spawner: Spawner, relays_of: Callable[[str], list[Relay]]) -> None:
        self.table, self.spawner, self.relays_of = table, spawner, relays_of
        self.active: dict[str, ActiveAction] = {}
        self.lingering: dict[str, ActiveAction] = {}  # stopped, but something of them remained
        self.stopped: set[str] = set()  # stopped with nothing left: stopping again is a no-op
        self.handles = itertools.count(1)

    def start(self, action: str, workload: str, service: str, params: dict[str, Any]) -> str:
        if action not in SUPPORTED:
            raise unsupported(action)
        replicas = self.table.of(workload)
        default_mode = "one" if action in ("instance-kill", "instance-failure") else "all"
        chosen = pick(replicas, params, default_mode) if action not in ("network-delay", "network-loss") else replicas
        handle = f"{action}-{next(self.handles)}"
        record = ActiveAction(handle, action, service, [r.id for r in chosen])
        if action == "instance-kill":
            for replica in chosen:
                for r in replica.runners:
                    r.signal(signal.SIGKILL)
        elif action == "instance-failure":
            for replica in chosen:
                for r in replica.runners:
                    r.suspended = True
                    r.signal(signal.SIGSTOP)
                    record.runners.append(r)
        elif action in ("cpu-stress", "memory-stress"):
            argv, count = helper_argv(action, params)
            for replica in chosen:
                for _ in range(count):
                    helper = self.spawner.spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                env=leftovers.marked_env(handle))
                    replica.runners[0].attach(helper)
                    record.helpers.append((replica.runners[0], helper))
        else:
            self._network(action, workload, params, record)
        self.active[handle] = record
        return handle

    def _network(self, action: str, workload: str, params: dict[str, Any], record: ActiveAction) -> None:
        relays = self.relays_of(workload)
        if action == "network-delay":
            ms = int_param(params, action, "ms")
            for r in relays:
                record.relays.append((r, r.delay_s, r.loss))
                r.delay_s = ms / 1000
        else:
            pct = int_param(params, action, "percent")
            for r in relays:
                record.relays.append((r, r.delay_s, r.loss))
                r.loss = pct / 100

    def stop(self, handle: str, settle_s: float = 2.0) -> None:
        """Revert the action and return only once the machine shows nothing of it; else raise naming
        what remains (the action stays known, so `leftovers` and a later stop can read it again)."""
        record = self.active.pop(handle, None) or self.lingering.pop(handle, None)
        if record is None and handle in self.stopped:
            return  # undo is safe to repeat
        if record is None:
            raise InputError(f"no running action {handle!r} on the local platform")
        record.revert()
        deadline = time.monotonic() + settle_s
        while (remains := record.leftovers()) and time.monotonic() < deadline:
            time.sleep(0.1)  # a SIGKILLed helper takes a moment to be reaped
        if remains:
            self.lingering[handle] = record
            raise PlatformError(f"{handle} stopped, but left behind: {'; '.join(remains)}")
        self.stopped.add(handle)

    def leftovers(self, handle: str) -> list[str]:
        """What a stopped action left behind, read again now; [] for one that left nothing or is unknown."""
        record = self.lingering.get(handle)
        if record is None:
            return leftovers.process_leftovers(handle)
        remains = record.leftovers()
        if not remains:
            self.lingering.pop(handle, None)
            self.stopped.add(handle)
        return remains

    def handles_in_force(self) -> list[str]:
        return sorted(self.active)

    def revert_all(self) -> None:
        for record in list(self.active.values()):
            record.revert()
