"""Direct actions on the local platform: what it can do without Chaos Mesh, and what it cannot."""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from faultkit.errors import InputError, Unsupported

if TYPE_CHECKING:
    import subprocess

    from faultkit.platforms.local.instances import Instance, Runner
    from faultkit.platforms.local.relay import Relay

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


def int_param(params: dict[str, Any], name: str, low: int, high: int, default: int | None = None) -> int:
    value = params.get(name, default)
    try:
        n = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"action parameter {name!r}: expected an integer, got {value!r}") from None
    if not low <= n <= high:
        raise InputError(f"action parameter {name!r}: {n} is outside {low}..{high}")
    return n


def helper_argv(action: str, params: dict[str, Any]) -> tuple[list[str], int]:
    """(argv of one helper process, how many to attach to each instance)."""
    if action == "cpu-stress":
        return list(CPU_HOG), int_param(params, "workers", 1, 64, 1)
    mb = int_param(params, "mb", 1, 64 * 1024)
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


def pick(instances: list[Instance], params: dict[str, Any], default_mode: str) -> list[Instance]:
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
