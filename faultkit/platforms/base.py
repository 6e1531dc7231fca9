"""The platform protocol: every operation the validator needs from a running application.

The validator's verdicts rest on what a platform keeps true (DESIGN.md, "Platforms"): a wrong
port really refuses, a wrong host really fails to resolve, a too-low memory limit really kills,
a rollout replaces every old replica, restarts are counted per instance, `down` leaves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Build:
    """An immutable, content-addressed build of one service (a folder locally, an image elsewhere)."""

    id: str  # "sha256:<hex>" of the build's content
    service: str
    location: str  # folder or image reference


def short_id(build_id: str, digits: int = 12) -> str:
    """A build id for people: its algorithm (when it has one) and the first hex digits, whatever the prefix."""
    algo, sep, hexes = build_id.partition(":")
    return f"{algo}:{hexes[:digits]}" if sep else build_id[:digits]


@dataclass(frozen=True)
class Instance:
    """One running copy of a service (a replica: a process group locally, a pod on Kubernetes)."""

    id: str  # stable within a deployment, e.g. "cart-0"
    service: str
    build: str  # Build.id it runs
    ready: bool
    restarts: int
    oom_kills: int = 0
    last_exit: int | None = None  # exit status of the last termination; 137 for a kill


@dataclass(frozen=True)
class LogRecord:
    ts: float  # seconds since the epoch
    service: str
    instance: str
    level: str  # "INFO", "WARNING", "ERROR", ...
    message: str
    fields: dict[str, object] = field(default_factory=dict)


@runtime_checkable
class Platform(Protocol):
    """What every platform implements. Operations it cannot carry out raise errors.Unsupported."""

    name: str

    # lifecycle
    def up(self, app: str, replicas: int = 1, timeout: float = 90.0) -> None: ...
    def down(self) -> None: ...
    def is_up(self) -> bool: ...
    def app(self) -> str: ...
    def target(self) -> dict[str, str]:
        """Where changes go, as the journal records it: {"platform": name, ...} plus what tells one
        instance of the platform from another (a cluster's server, context, namespace)."""
        ...

    # state
    def instances(self, service: str | None = None) -> list[Instance]: ...
    def ready(self, service: str) -> bool: ...
    def endpoint(self, service: str, port: int | None = None) -> str: ...

    # builds and rollouts
    def build(self, service: str, source_root: str | None = None) -> Build: ...
    def build_contains(self, build_id: str, text: str) -> bool: ...
    def builds(self, service: str) -> list[Build]: ...
    def rollout(self, service: str, build_id: str, timeout: float = 60.0) -> None: ...

    # manifest settings
    def read_field(self, workload: str, container: str, path: str) -> str | None: ...
    def patch_field(
        self, workload: str, container: str, path: str, value: str | None, timeout: float = 60.0
    ) -> None:
        """Set the field and wait for it to be in force. errors.NotReady: applied, but what it rolled out
        never became ready (the change stays, no old replica serves); `rollout` undoes instead."""
        ...

    # observation
    def logs(self, service: str, since: float, until: float | None = None) -> list[LogRecord]: ...
    def request_counts(self, service: str) -> dict[str, dict[str, float] | None]:
        """Each instance's cumulative requests by HTTP status; None for one that did not answer."""
        ...

    # direct interventions
    def actions(self) -> frozenset[str]: ...
    def start_action(self, action: str, service: str, params: dict[str, object], mode: str | None = None) -> str:
        """Start a direct action; returns its handle. `mode`: "one" (one replica, a pod-level fault) or
        "all" (every replica); None: the action's own default. `params` are the action's parameters."""
        ...
    def stop_action(self, handle: str) -> None: ...
    def active_actions(self) -> list[str]: ...
    def kill(self, service: str, instance: str | None = None) -> str: ...
