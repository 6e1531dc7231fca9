"""Readiness and liveness probes: a typed spec parsed once from the manifest, one check, the prober.

The spec is the container's `readinessProbe` / `livenessProbe` with Kubernetes' defaults filled
in. `check` runs one probe against a replica's loopback ports; `Prober` is the per-container loop
state (failure counts, readiness) a kubelet keeps, advanced by `tick`, so it needs no process to
be tested.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import requests

from faultkit.errors import InputError

# Readiness is polled at most this far apart and a probe waits at most this long: readiness only
# decides where traffic goes, and a validation window is a few seconds.
PERIOD_CAP_S = 1.0
TIMEOUT_CAP_S = 1.0
NOT_READY_WAIT_S = 0.2  # how soon a not-ready container is probed again
FIX = "fix the probe in the manifest (its fields are Kubernetes' own)"


@dataclass(frozen=True)
class HttpGet:
    path: str
    port: int | str | None  # a number or a containerPort name, as declared


@dataclass(frozen=True)
class TcpSocket:
    port: int | str | None


@dataclass(frozen=True)
class Exec:
    command: tuple[str, ...]


Action = HttpGet | TcpSocket | Exec


@dataclass(frozen=True)
class ProbeSpec:
    """One probe as declared; `action` None (no handler declared) always succeeds."""

    action: Action | None
    period_s: float = 10.0
    timeout_s: float = 1.0
    failure_threshold: int = 3
    initial_delay_s: float = 0.0

    @classmethod
    def parse(cls, raw: object, where: str) -> ProbeSpec | None:
        """The spec of a manifest's probe mapping (None when the probe is not declared)."""
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            raise InputError(f"{where}: expected a mapping, got {raw!r}; {FIX}")
        return cls(
            action=_action(raw, where),
            period_s=_number(raw, "periodSeconds", 10.0, where),
            timeout_s=_number(raw, "timeoutSeconds", 1.0, where),
            failure_threshold=int(_number(raw, "failureThreshold", 3, where)),
            initial_delay_s=_number(raw, "initialDelaySeconds", 0.0, where),
        )


def _number(raw: Mapping[object, object], key: str, default: float, where: str) -> float:
    value = raw.get(key, default)
    if isinstance(value, int | float | str):
        try:
            return float(value)
        except ValueError:
            pass
    raise InputError(f"{where}.{key}: expected a number, got {value!r}; {FIX}")


def _port(handler: Mapping[object, object]) -> int | str | None:
    port = handler.get("port")
    # anything else maps, like an undeclared name, to a port where nothing listens
    return port if isinstance(port, int | str) else None


def _action(raw: Mapping[object, object], where: str) -> Action | None:
    """The handler, in the order a kubelet looks for them: httpGet, tcpSocket, exec."""
    for key in ("httpGet", "tcpSocket", "exec"):
        handler = raw.get(key)
        if handler is None:
            continue
        if not isinstance(handler, Mapping):
            raise InputError(f"{where}.{key}: expected a mapping, got {handler!r}; {FIX}")
        if key == "httpGet":
            return HttpGet(path=str(handler.get("path", "/")), port=_port(handler))
        if key == "tcpSocket":
            return TcpSocket(port=_port(handler))
        command = handler.get("command")
        if not isinstance(command, list) or not command:
            raise InputError(f"{where}.exec.command: expected a non-empty list of strings, got {command!r}; {FIX}")
        return Exec(command=tuple(str(a) for a in command))
    return None


def check(spec: ProbeSpec, port_of: Callable[[int | str | None], int], cwd: Path, env: Mapping[str, str]) -> bool:
    """Run one probe: `port_of` maps a declared port (number or name) to the replica's loopback port."""
    timeout = min(spec.timeout_s, TIMEOUT_CAP_S)
    action = spec.action
    if isinstance(action, HttpGet):
        try:
            r = requests.get(f"http://127.0.0.1:{port_of(action.port)}{action.path}", timeout=timeout)
            return 200 <= r.status_code < 400
        except requests.RequestException:
            return False
    if isinstance(action, TcpSocket):
        try:
            with socket.create_connection(("127.0.0.1", port_of(action.port)), timeout=timeout):
                return True
        except OSError:
            return False
    if isinstance(action, Exec):
        try:
            done = subprocess.run(
                list(action.command),
                cwd=cwd,
                env=dict(env),
                capture_output=True,
                timeout=timeout,
                start_new_session=True,
            )
            return done.returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False
    return True


class Prober:
    """One container's probe state: readiness, consecutive failures, the last liveness probe.

    `tick` runs whatever probe is due and returns how long to wait before the next tick. Readiness
    is polled at most PERIOD_CAP_S apart (it only decides where traffic goes); liveness keeps its
    declared period, because it kills: a start slowed down by a CPU limit gets the
    failureThreshold x periodSeconds a kubelet would give it.
    """

    def __init__(
        self,
        readiness: ProbeSpec | None,
        liveness: ProbeSpec | None,
        probe: Callable[[ProbeSpec], bool],
        on_liveness_failure: Callable[[], None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.readiness, self.liveness = readiness, liveness
        self.probe, self.on_liveness_failure, self.clock = probe, on_liveness_failure, clock
        self.ready = False
        self.ready_failures = 0
        self.live_failures = 0
        self.last_live = 0.0
        self.live_period = max(liveness.period_s if liveness is not None else 10.0, 0.1)
        paced_by = readiness if readiness is not None else liveness
        self.period = paced_by.period_s if paced_by is not None else 1.0

    def tick(self, alive: bool, started_at: float, suspended: bool) -> float:
        age = self.clock() - started_at
        readiness, liveness = self.readiness, self.liveness
        if not alive:
            self.ready = False
        elif readiness is None:
            self.ready = True
        elif age >= min(readiness.initial_delay_s, PERIOD_CAP_S):
            if self.probe(readiness):
                self.ready_failures = 0
                self.ready = True
            else:
                self.ready_failures += 1
                if self.ready_failures >= readiness.failure_threshold:
                    self.ready = False
        if (
            alive
            and liveness is not None
            and not suspended
            and age >= liveness.initial_delay_s
            and self.clock() - max(self.last_live, started_at) >= self.live_period
        ):
            self.last_live = self.clock()
            self.live_failures = 0 if self.probe(liveness) else self.live_failures + 1
            if self.live_failures >= liveness.failure_threshold:
                self.live_failures = 0
                self.on_liveness_failure()
        return min(max(self.period, 0.1), PERIOD_CAP_S) if self.ready else NOT_READY_WAIT_S
