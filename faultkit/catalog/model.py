"""Typed, immutable catalog entries. YAML stays at the edge (catalog/loader.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from faultkit.yamlio import canonical_json

FORMAT = "faultkit/v1"


@dataclass(frozen=True)
class Target:
    service: str
    workload: str | None = None
    container: str | None = None


@dataclass(frozen=True)
class Artifact:
    kind: str
    ref: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Probe:
    service: str
    path: str
    method: str = "GET"
    body: MappingProxyType | None = None  # sent as JSON
    form: MappingProxyType | None = None  # sent as an HTML form
    expect_status: int = 200
    timeout_s: float = 3.0
    expect_latency_ms: int | None = None  # an attempt slower than this fails, whatever its status
    expect_text: tuple[str, ...] = ()  # the answer must contain every one
    error_text: tuple[str, ...] = ()  # an answer showing any of these failed the user, whatever its status
    setup: tuple = ()  # requests made before each probe (frozen mappings of method, path, body or form)
    setup_when: str = "each"  # or "after-failure": only until an attempt passes, and again after one fails


@dataclass(frozen=True)
class ArtifactCheck:
    kind: str  # "build", "setting" or "action"
    service: str | None = None
    workload: str | None = None
    container: str | None = None
    field: str | None = None
    value: str | None = None
    absent_marker: str | None = None


@dataclass(frozen=True)
class CodeChange:
    patch: str
    update: str
    defect: str
    requests: tuple[str, ...]
    marker: str


@dataclass(frozen=True)
class ConfigChange:
    workload: str
    container: str
    field: str
    old: str | None
    new: str | None
    kind: str
    loaded_from: str | None = None  # ConfigMap/<name> the container loads `old` from (envFrom)

    @property
    def written(self) -> str | None:
        """What the workload itself writes at the field before the change, and a revert puts back: a
        var loaded from a ConfigMap is not written there, and the revert removes the one written."""
        return None if self.loaded_from else self.old


@dataclass(frozen=True)
class DirectAction:
    action: str
    params: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class LogSignature:
    message: str
    service: str


@dataclass(frozen=True)
class Evidence:
    metrics: tuple[str, ...] = ()
    logs: tuple[str, ...] = ()
    traces: tuple[str, ...] = ()


@dataclass(frozen=True)
class Validation:
    verdict: str
    bundle_digest: str
    at: str
    platform: str
    bundle: str | None = None
    entry_digest: str | None = None
    patch_digest: str | None = None
    window_s: float | None = None
    repeat: int | None = None
    failed_rules: tuple[str, ...] = ()
    # the second verdict (`validate --stability`): verdict, bundle, bundle_digest, window_s, ...
    stability: MappingProxyType | None = None


@dataclass(frozen=True)
class Entry:
    id: str
    app: str
    title: str
    mechanism: str
    category: str
    level: str
    target: Target
    scope: tuple[str, ...]
    artifact: Artifact
    probe: Probe
    artifact_check: ArtifactCheck
    effect: str
    evidence: Evidence
    recovery: str
    code: CodeChange | None = None
    config: ConfigChange | None = None
    direct: DirectAction | None = None
    log: LogSignature | None = None
    validation: Validation | None = None
    raw: MappingProxyType = field(default_factory=lambda: MappingProxyType({}), compare=False, repr=False)

    @property
    def change_key(self) -> tuple[str, ...]:
        """Two entries with the same key make the same change to the same artifact."""
        if self.config:
            c = self.config
            return ("config", self.app, c.workload, c.container, c.field, str(c.new))
        if self.direct:
            params = canonical_json(thaw(self.direct.params))
            return ("direct", self.app, self.target.service, self.level, self.direct.action, params)
        assert self.code
        return ("code", self.app, self.target.service, self.code.patch)

    @property
    def artifact_key(self) -> str:
        """The artifact a schedule must not change twice at once."""
        if self.config:
            return f"{self.app}/{self.config.workload}/{self.config.container}/{self.config.field}"
        if self.code:
            return f"{self.app}/{self.target.service}/build"
        return f"{self.app}/{self.target.service}/{self.level}"

    def digest(self) -> str:
        """Digest of the entry's content without its validation record (which the verdict writes)."""
        body = {k: thaw(v) for k, v in self.raw.items() if k != "validation"}
        return "sha256:" + hashlib.sha256(canonical_json(body).encode()).hexdigest()


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    if isinstance(value, MappingProxyType | dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


def entry_from_data(d: dict[str, Any]) -> Entry:
    """Build an Entry from data that already passed the schema. The data is frozen once, and each
    record takes its part of the frozen copy (a cold lint builds a thousand entries)."""
    raw = _freeze(d)
    opt = lambda key, cls: cls(**_kw(raw[key], cls)) if raw.get(key) is not None else None  # noqa: E731
    return Entry(
        id=raw["id"], app=raw["app"], title=raw["title"], mechanism=raw["mechanism"], category=raw["category"],
        level=raw["level"], target=Target(**_kw(raw["target"], Target)), scope=tuple(raw["scope"]),
        artifact=Artifact(**_kw(raw["artifact"], Artifact)), probe=Probe(**_kw(raw["probe"], Probe)),
        artifact_check=ArtifactCheck(**_kw(raw["artifact_check"], ArtifactCheck)), effect=raw["effect"],
        evidence=Evidence(**_kw(raw["evidence"], Evidence)), recovery=raw["recovery"],
        code=opt("code", CodeChange), config=opt("config", ConfigChange), direct=opt("direct", DirectAction),
        log=opt("log", LogSignature), validation=opt("validation", Validation), raw=raw,
    )


_FIELDS: dict[type, frozenset[str]] = {}


def _kw(d: MappingProxyType, cls: type) -> dict[str, Any]:
    """The record's fields (already frozen); unknown keys are lint warnings, so they must not stop the load."""
    known = _FIELDS.get(cls)
    if known is None:
        known = _FIELDS[cls] = frozenset(f.name for f in fields(cls))
    return {k: v for k, v in d.items() if k in known}
