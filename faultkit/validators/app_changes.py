"""A change to a running application, as one typed value.

Three kinds, one per mechanism: a rollout of a build (code faults), a setting patched in a
workload's manifest (config faults), and a direct action (stress, network, kill, freeze). Each
value knows how to apply itself, check that it holds (`in_place`), undo itself, check that the
undo holds (`undone`), say what its undo did (`describe`), and round-trip through the journal's
JSON. The validator's cycles, the write-ahead journal and `faultkit recover` all go through these
values, so a new kind of change is written once, here.

    change = change_for(entry, build=new_build.id, undo_build=deployed_build(platform, service))
    applied = change.apply(platform)          # the same change, with what undo needs (a handle)
    applied.in_place(platform).ok             # rollout done / value read back / action in force
    applied.undo(platform)                    # idempotent
    applied.undone(platform).ok

The JSON spelling is the journal's (kind "rollout", "patch" or "action"), unchanged from the
journals earlier versions wrote, so `faultkit recover` reads those too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Protocol

from faultkit.catalog.model import Entry, thaw
from faultkit.errors import PlatformError
from faultkit.platforms.base import Platform, short_id
from faultkit.validators.records import CheckRecord

# Undo timeout for a journal entry that did not record one (every current one does).
DEFAULT_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class Check:
    """Whether a change (or its undo) holds on the application, with the figure that says so."""

    ok: bool
    measured: Any
    threshold: Any
    detail: str
    build: str | None = None  # rollouts: the build every replica should run

    def record(self) -> CheckRecord:
        out: CheckRecord = {"ok": self.ok, "measured": self.measured, "threshold": self.threshold,
                            "detail": self.detail}
        if self.build is not None:
            out["build"] = self.build
        return out


class Change(Protocol):
    """What every change to a running application offers."""

    kind: ClassVar[str]

    def apply(self, platform: Platform) -> Change:
        """Make the change; returns it with whatever its undo needs that only the platform knows."""
        ...

    def in_place(self, platform: Platform) -> Check:
        """Whether the change holds now: rollout done, value read back, action in force."""
        ...

    def undo(self, platform: Platform) -> None:
        """Take the change back; safe to repeat, and safe on a change that never got made."""
        ...

    def undone(self, platform: Platform) -> Check:
        """Whether the undo holds now: baseline build, old value read back, action stopped."""
        ...

    def describe(self) -> str:
        """What undo does, in one line ("rolled cart back to sha256:...")."""
        ...

    def to_json(self) -> dict[str, Any]:
        """The journal's spelling; `from_json` reads it back."""
        ...


def _build_check(platform: Platform, service: str, expect: str) -> Check:
    builds = sorted({i.build for i in platform.instances(service)})
    ok = builds == [expect]
    return Check(
        ok,
        ", ".join(short_id(b) for b in builds),
        short_id(expect),
        "every replica runs the expected build" if ok else "replicas run other builds",
        build=expect,
    )


@dataclass(frozen=True)
class RolloutChange:
    """Roll a service out to a build; undone by rolling it back to the build it ran before."""

    kind: ClassVar[str] = "rollout"
    service: str
    build: str
    undo_build: str
    timeout_s: float = 60.0

    def apply(self, platform: Platform) -> RolloutChange:
        platform.rollout(self.service, self.build, timeout=self.timeout_s)
        return self

    def in_place(self, platform: Platform) -> Check:
        return _build_check(platform, self.service, self.build)

    def undo(self, platform: Platform) -> None:
        platform.rollout(self.service, self.undo_build, timeout=self.timeout_s)

    def undone(self, platform: Platform) -> Check:
        return _build_check(platform, self.service, self.undo_build)

    def describe(self) -> str:
        return f"rolled {self.service} back to {short_id(self.undo_build)}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "service": self.service, "build": self.build, "undo_build": self.undo_build,
                "timeout": self.timeout_s}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RolloutChange:
        return cls(data["service"], data["build"], data["undo_build"], float(data.get("timeout", DEFAULT_TIMEOUT_S)))


@dataclass(frozen=True)
class SettingChange:
    """Set one field of a workload's container; undone by setting the old value back.

    `service` is the service whose readiness says the new setting is live (the entry's target).
    """

    kind: ClassVar[str] = "patch"
    workload: str
    container: str
    field: str
    value: str | None
    undo_value: str | None
    service: str
    timeout_s: float = 60.0

    def apply(self, platform: Platform) -> SettingChange:
        platform.patch_field(self.workload, self.container, self.field, self.value, timeout=self.timeout_s)
        return self

    def _read_back(self, platform: Platform, expect: str | None) -> Check:
        deployed = platform.read_field(self.workload, self.container, self.field)
        ready = platform.ready(self.service)
        return Check(deployed == expect and ready, deployed, expect,
                     f"deployed value read back; {self.service} ready: {ready}")

    def in_place(self, platform: Platform) -> Check:
        return self._read_back(platform, self.value)

    def undo(self, platform: Platform) -> None:
        platform.patch_field(self.workload, self.container, self.field, self.undo_value, timeout=self.timeout_s)

    def undone(self, platform: Platform) -> Check:
        return self._read_back(platform, self.undo_value)

    def describe(self) -> str:
        return f"restored {self.workload}/{self.container} {self.field} to {self.undo_value!r}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "workload": self.workload, "container": self.container, "field": self.field,
                "value": self.value, "undo_value": self.undo_value, "service": self.service,
                "timeout": self.timeout_s}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SettingChange:
        # journals written before the service was recorded name only the workload
        return cls(data["workload"], data["container"], data["field"], data["value"], data["undo_value"],
                   data.get("service", data["workload"]), float(data.get("timeout", DEFAULT_TIMEOUT_S)))


@dataclass(frozen=True)
class ActionChange:
    """A direct action on a service; undone by stopping it. `handle` is the platform's name for
    the action in force, known once it has started."""

    kind: ClassVar[str] = "action"
    action: str
    service: str
    params: Mapping[str, Any]
    handle: str | None = None
    mode: str | None = None  # "one" replica (pod level) or "all" (service level)

    def apply(self, platform: Platform) -> ActionChange:
        return replace(self, handle=platform.start_action(self.action, self.service, dict(self.params), self.mode))

    def in_place(self, platform: Platform) -> Check:
        running = self.handle is not None and self.handle in platform.active_actions()
        return Check(running, "started" if running else "not running", "started", f"{self.action} on {self.service}")

    def undo(self, platform: Platform) -> None:
        if self.handle:
            platform.stop_action(self.handle)
            return
        # killed between starting the action and recording its handle: one validation runs at a
        # time on a platform (the journal says so), so every action in force is this one
        for handle in platform.active_actions():
            platform.stop_action(handle)

    def undone(self, platform: Platform) -> Check:
        # read back, never assumed: chaos tools' users find rules and stress processes left behind
        # after a "successful" stop (issue 29)
        handles = [self.handle] if self.handle else platform.active_actions()
        remains = [line for h in handles for line in platform.action_leftovers(h)]
        if self.handle is None:
            remains += [f"{h} still in force" for h in platform.active_actions()]
        if remains:
            detail = f"{self.action} on {self.service} left behind: {'; '.join(remains)}"
            return Check(False, remains, "nothing left", detail)
        return Check(True, "stopped", "stopped", self.describe())

    def describe(self) -> str:
        return f"stopped {self.action} on {self.service}"

    def to_json(self) -> dict[str, Any]:
        out = {"kind": self.kind, "action": self.action, "service": self.service, "params": dict(self.params)}
        if self.mode is not None:
            out["mode"] = self.mode
        return {**out, "handle": self.handle} if self.handle else out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ActionChange:
        params = dict(data.get("params") or {})
        mode = data.get("mode", params.pop("mode", None))  # earlier journals kept the mode in params
        return cls(data["action"], data["service"], params, data.get("handle"), mode)


KINDS: dict[str, type[RolloutChange] | type[SettingChange] | type[ActionChange]] = {
    c.kind: c for c in (RolloutChange, SettingChange, ActionChange)
}


def from_json(data: Mapping[str, Any]) -> Change:
    kind = data.get("kind")
    if kind not in KINDS:
        raise PlatformError(f"journal: unknown change kind {kind!r}; inspect the journal, then remove it")
    return KINDS[kind].from_json(data)


def deployed_build(platform: Platform, service: str) -> str | None:
    """The build the service's replicas run now: what a rollout is undone to."""
    target = [i for i in platform.instances() if i.service == service]
    return target[0].build if target else None


def change_for(entry: Entry, build: str | None = None, undo_build: str | None = None,
               timeout_s: float = 60.0) -> Change:
    """The change an entry makes. A code fault needs its new build and the build to roll back to."""
    if entry.code:
        if build is None or undo_build is None:
            raise PlatformError(f"{entry.id}: a code fault's change needs its new build and the baseline build")
        return RolloutChange(entry.target.service, build, undo_build, timeout_s)
    if entry.config:
        c = entry.config
        return SettingChange(c.workload, c.container, c.field, c.new, c.written, entry.target.service, timeout_s)
    if entry.direct is None:
        raise PlatformError(f"{entry.id}: the entry makes no change (no code, config or direct block)")
    # pod level acts on one replica, service level on every replica
    params = dict(thaw(entry.direct.params))
    mode = str(params.pop("mode", "one" if entry.level == "pod" else "all"))
    return ActionChange(entry.direct.action, entry.target.service, params, mode=mode)
