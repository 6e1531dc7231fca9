"""The platform protocol: every operation the validator needs from a running application.

The validator's verdicts rest on what a platform keeps true (DESIGN.md, "Platforms"): a wrong
port really refuses, a wrong host really fails to resolve, a too-low memory limit really kills,
a rollout replaces every old replica, restarts are counted per instance, `down` leaves nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
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


@dataclass(frozen=True)
class ServiceState:
    """One service of the running app, as `status()` reports it."""

    build: str | None  # the build it runs (None while it is being built, or when replicas differ)
    endpoint: str | None  # its Service address, None when it exposes none (or the platform opens none to report)
    instances: tuple[Instance, ...]
    details: Mapping[str, object] = field(default_factory=dict)  # the platform's own fields, printed in --json
    instance_details: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # by instance id, ditto


@dataclass(frozen=True)
class SiteState:
    """Another site of a two-site app (observed, never changed)."""

    namespace: str  # where it runs
    ready: bool  # every instance there is ready


@dataclass(frozen=True)
class AppStatus:
    """What `faultkit status` shows, on every platform: one record, one JSON shape (`as_json`).

    Campaigns read `up`, `app`, `phase` and each service's instances' `ready` from the JSON; the rest
    is for people and scripts that know the platform."""

    platform: str
    app: str | None  # None: nothing is up
    phase: str = "running"  # "starting", "deploying", "running" or "failed"
    error: str | None = None  # why the deployment failed
    where: str = ""  # where the app runs, for people ("on the local platform", "in namespace N ...")
    services: Mapping[str, ServiceState] = field(default_factory=dict)
    sites: Mapping[str, SiteState] = field(default_factory=dict)  # a two-site app's other sites
    notes: tuple[str, ...] = ()  # lines for people under the table (what the platform enforces)
    details: Mapping[str, object] = field(default_factory=dict)  # the platform's own fields, printed in --json
    # nothing up, but an earlier run left these behind (processes of a supervisor that died): `down`
    # sweeps them, and `up` must not start beside them. One line each; () when nothing is left.
    leftovers: tuple[str, ...] = ()

    @property
    def up(self) -> bool:
        return self.app is not None

    def unready(self) -> list[str]:
        """Services without instances or with one not ready, sorted."""
        return sorted(n for n, s in self.services.items() if not s.instances or not all(i.ready for i in s.instances))

    def as_json(self) -> dict[str, object]:
        if not self.up:
            return {"up": False, "leftovers": list(self.leftovers)} if self.leftovers else {"up": False}
        services = {name: {"build": s.build, "endpoint": s.endpoint, **s.details,
                           "instances": [_instance_json(i, s.instance_details.get(i.id, {})) for i in s.instances]}
                    for name, s in self.services.items()}
        out: dict[str, object] = {"up": True, "app": self.app, "phase": self.phase, "error": self.error,
                                  "services": services, **self.details}
        if self.sites:  # two-site apps only: a one-site app's record has no `sites`
            out["sites"] = {name: {"namespace": s.namespace, "ready": s.ready} for name, s in self.sites.items()}
        return out


def _instance_json(i: Instance, details: Mapping[str, object]) -> dict[str, object]:
    return {"id": i.id, "service": i.service, "build": i.build, "ready": i.ready, "restarts": i.restarts,
            "oom_kills": i.oom_kills, "last_exit": i.last_exit, **details}


@runtime_checkable
class Platform(Protocol):
    """What every platform implements. Operations it cannot carry out raise errors.Unsupported."""

    name: str

    # lifecycle
    def up(self, app: str, replicas: int = 1, timeout: float = 90.0) -> None: ...
    def down(self) -> str:
        """Stop everything `up` started and return, for people, what was done ("namespace N is deleted
        and gone"); when nothing is up, sweep what a crashed run may have left."""
        ...
    def prepare(self) -> None:
        """Start what the platform needs before a validation or a replay acts (the kubernetes node
        agent), so the first action does not wait for it inside a window; nothing when up is enough.
        An agent that cannot run is an error saying why."""
        ...
    def is_up(self) -> bool: ...
    def app(self) -> str: ...
    def target(self) -> dict[str, str]:
        """Where changes go, as the journal records it: {"platform": name, ...} plus what tells one
        instance of the platform from another (a cluster's server, context, namespace)."""
        ...

    # state
    def status(self) -> AppStatus:
        """The app's state for `faultkit status`; AppStatus(platform, None) when nothing is up."""
        ...
    def instances(self, service: str | None = None) -> list[Instance]: ...
    def ready(self, service: str) -> bool: ...
    def endpoint(self, service: str, port: int | None = None) -> str: ...
    def instance_endpoints(self, service: str) -> dict[str, str]:
        """Each instance's own address on this machine (its first port), by instance id: its /metrics."""
        ...
    def query_address(self, url: str, option: str = "the URL") -> str:
        """The address on this machine of a query service the user named (a Prometheus, a Jaeger):
        an http(s) URL as given; `k8s://NAMESPACE/SERVICE:PORT` reached through the kubernetes API
        server by the platform that has one (a UsageError on the others). Open until `close`/`down`."""
        ...
    def other_sites(self) -> Mapping[str, Platform]:
        """A two-site app's other sites by name (observed by the validator, never changed); {} for one site."""
        ...

    # builds and rollouts
    # True when build() runs the service's own lint and unit tests itself (in the image it builds, with the
    # image's own dependencies) and raises errors.CheckFailed when they fail; False when the validator runs
    # them on this machine, where the service runs, before it builds
    checks_in_build: bool

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
    def signal_sources(self) -> dict[str, dict[str, object]]:
        """Which source `request_counts` and `logs` read, as each window records it (rules v5):
        {"requests": {"kind", "endpoint" or "query", "metric"}, "logs": {"source", "format", ...}}."""
        ...
    def telemetry_scope(self) -> dict[str, str]:
        """The resource attributes that tell this instance's telemetry from another instance's on a
        shared stack ({"k8s.namespace.name": NS} on kubernetes); {} where there are none. Jaeger is
        asked for them as tags; Prometheus holds them as labels (signals.prometheus_labels)."""
        ...

    # direct interventions
    def actions(self) -> frozenset[str]:
        """The direct actions this platform carries out (a query: it starts nothing; see `prepare`)."""
        ...
    def start_action(self, action: str, service: str, params: dict[str, object], mode: str | None = None) -> str:
        """Start a direct action; returns its handle. `mode`: "one" (one replica, a pod-level fault) or
        "all" (every replica); None: the action's own default. `params` are the action's parameters."""
        ...
    def stop_action(self, handle: str) -> None:
        """Stop an action; returns only once the platform has read back that nothing of it remains,
        else raises PlatformError naming what does (issue 29)."""
        ...

    def action_leftovers(self, handle: str) -> list[str]:
        """What of a stopped (or unknown) action the platform still finds, one line each; [] when
        nothing remains. Read back now, never remembered: `undone` and `recover` rest on it."""
        ...
    def active_actions(self) -> list[str]: ...
