"""Application descriptors (apps/<app>/app.yaml): services, dependency edges, entry, sites."""

from __future__ import annotations

import difflib
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faultkit.apps.logformat import JSON_LINES, LogFormat, log_format
from faultkit.apps.signals import Signals, signals_from_data
from faultkit.errors import InputError
from faultkit.names import check_name
from faultkit.schema import check_document
from faultkit.workspace import Workspace
from faultkit.yamlio import Located, Pointer, load_located, load_text


@dataclass(frozen=True)
class Port:
    name: str
    port: int


@dataclass(frozen=True)
class Version:
    """One of several workloads that serve one Service (`reviews-v1`, `-v2`, `-v3` of `reviews`)."""

    version: str
    workload_kind: str
    workload: str


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    language: str
    workload_kind: str
    workload: str
    containers: tuple[str, ...]
    ports: tuple[Port, ...]
    source: str | None  # folder under the app's source_dir; None when faultkit has no source
    aliases: tuple[str, ...]
    versions: tuple[Version, ...] = ()  # empty: one workload, `workload`
    lint: tuple[str, ...] | None = None  # its own build: lint command, in place of the app's; () for none
    test: tuple[str, ...] | None = None  # its own build: test command, likewise
    instrument: bool = True  # its image gets the app's images.instrument for its language, if any

    @property
    def workloads(self) -> tuple[str, ...]:
        """Every workload that runs this service: its versions', else its own."""
        return tuple(v.workload for v in self.versions) or (self.workload,)


@dataclass(frozen=True)
class Site:
    name: str
    zone: str
    role: str  # "active" or "standby"


@dataclass(frozen=True)
class UpstreamFile:
    path: str
    sha256: str


@dataclass(frozen=True)
class Upstream:
    """Where the manifests come from: repository, version (tag, chart version or commit), folder, digests."""

    repository: str
    version: str
    commit: str | None
    path: str
    files: tuple[UpstreamFile, ...]


@dataclass(frozen=True)
class BaseImage:
    """The base image a service's Dockerfile starts from (its `ARG BASE`).

    Either `ref`, an image the user provides (their registry's), used as it is; or `suite` and
    `packages`, built here from Debian packages with debootstrap (no registry needed), with
    `python` requirements installed from wheels into the image's python3 (images/wheels.py)."""

    ref: str | None = None
    suite: str = "bookworm"
    packages: tuple[str, ...] = ("python3",)
    python: tuple[str, ...] = ()  # pip requirements, e.g. "opentelemetry-sdk==1.45.1"
    env: tuple[tuple[str, str], ...] = ()  # (name, value) set in the image, sorted by name
    # (absolute path in the image, file in the app folder): what the image it stands for ships beyond
    # packages (an entrypoint script); with the image's own entrypoint and command, when it has them
    files: tuple[tuple[str, Path], ...] = ()
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()


@dataclass(frozen=True)
class Instrumentation:
    """images.instrument: zero-code OpenTelemetry added to each service's image by its language
    (faultkit/images/instrument.py). `java`: the agent's Maven coordinates; `python`: pip requirements."""

    java: str = ""
    python: tuple[str, ...] = ()


@dataclass(frozen=True)
class AppDescriptor:
    name: str
    version: str
    root: Path
    manifests_dir: Path
    source_dir: Path | None
    common: tuple[str, ...]
    entry: str
    services: tuple[ServiceSpec, ...]
    edges: tuple[tuple[str, str], ...]  # (caller, callee)
    sites: tuple[Site, ...]
    lint_command: tuple[str, ...]
    test_command: tuple[str, ...]
    load: tuple[str, ...] = ()  # services that generate the workload rather than serve it
    telemetry: tuple[str, ...] = ()  # observers: trace, metric and log collectors
    fault_controls: tuple[str, ...] = ()  # the application's own fault switches (feature-flag services)
    found_in: tuple[tuple[tuple[str, str], str], ...] = ()  # (edge, where) for edges not in the manifest env
    upstream: Upstream | None = None
    signals: Signals = field(default_factory=Signals)  # where request counts and traces come from
    probe: dict[str, Any] | None = None  # the symptom probe candidates start from (an entry's probe)

    def checks(self, service: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The lint and test commands of `service`: its own build: where it has one, else the app's."""
        spec = self.service(service)
        return (self.lint_command if spec.lint is None else spec.lint,
                self.test_command if spec.test is None else spec.test)

    @property
    def targets(self) -> tuple[str, ...]:
        """The services a fault may target: all but load generators, telemetry and fault controls."""
        left_out = {*self.load, *self.telemetry, *self.fault_controls}
        return tuple(s.name for s in self.services if s.name not in left_out)
    base_image: BaseImage = BaseImage()
    # images.from: (upstream FROM reference, the base it maps to), for Dockerfiles without ARG BASE
    from_images: tuple[tuple[str, BaseImage], ...] = ()
    instrument: Instrumentation = Instrumentation()
    log_format: LogFormat = JSON_LINES  # signals.logs: how the services' log lines are shaped

    @property
    def observed(self) -> tuple[str, ...]:
        """The services whose health the validator observes: all but the load generators."""
        return tuple(s.name for s in self.services if s.name not in self.load)

    @property
    def service_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.services)

    def target_refusal(self, name: str) -> str | None:
        """Why a fault may not target `name`: it observes, or it is the app's own fault switch."""
        if name in self.telemetry:
            return f"{name} is telemetry in {self.name}'s descriptor; faults must not blind the observer"
        if name in self.fault_controls:
            return f"{name} is one of {self.name}'s built-in fault controls (feature flags); left alone"
        return None

    def service(self, name: str) -> ServiceSpec:
        for s in self.services:
            if s.name == name:
                return s
        raise InputError(f"{name!r} is not a service of {self.name}{suggest(name, self.service_names)}")

    def callers(self, service: str) -> tuple[str, ...]:
        return tuple(sorted(a for a, b in self.edges if b == service))

    def scope(self, service: str) -> tuple[str, ...]:
        """`service` and every service that reaches it through dependency edges, sorted."""
        self.service(service)
        seen, todo = {service}, [service]
        while todo:
            for caller in self.callers(todo.pop()):
                if caller not in seen:
                    seen.add(caller)
                    todo.append(caller)
        return tuple(sorted(seen))

    def service_source(self, service: str) -> str | None:
        """The service's source folder relative to the app folder, e.g. 'src/cart'."""
        spec = self.service(service)
        if spec.source is None or self.source_dir is None:
            return None
        return (self.source_dir / spec.source).relative_to(self.root).as_posix()


def suggest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def app_names(workspace: Workspace) -> list[str]:
    if not workspace.apps_dir.is_dir():
        return []
    return sorted(p.parent.name for p in workspace.apps_dir.glob("*/app.yaml"))


def load_app(workspace: Workspace, name: str) -> AppDescriptor:
    check_name(name, "app")
    path = workspace.apps_dir / name / "app.yaml"
    if not path.exists() and not path.is_symlink():  # anything else there (a FIFO, a folder) is refused by name
        raise InputError(
            f"{name!r} is not an application of this catalog{suggest(name, app_names(workspace))}; "
            f"known: {', '.join(app_names(workspace)) or 'none'}"
        )
    return load_descriptor(path)


ALERT_PACK = "alerts.yaml"  # the app's rule pack in Prometheus' rule-file format, beside its app.yaml


def alert_pack_digest(workspace: Workspace, name: str) -> str | None:
    """The digest of the app's alert pack (its bytes), or None when it has none; the release records it,
    as the pack is versioned with the release."""
    path = workspace.apps_dir / name / ALERT_PACK
    if not path.is_file() or path.is_symlink():
        return None
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def load_descriptor(path: Path) -> AppDescriptor:
    return load_descriptor_data(path)[0]


def load_descriptor_data(path: Path) -> tuple[AppDescriptor, dict[str, Any]]:
    """The descriptor and the checked data it was made from (lint keeps that data in its cache)."""
    return _checked(load_located(path), path)


def check_descriptor_text(text: str, path: Path) -> AppDescriptor:
    """The descriptor `text` would be at `path`, checked exactly as load_descriptor reads it there:
    `apps import` refuses to write what `apps show` would refuse to read."""
    return _checked(load_text(text, path), path)[0]


def _checked(located: Located, path: Path) -> tuple[AppDescriptor, dict[str, Any]]:
    problems = check_document(located, "app")
    if problems:
        first = problems[0]
        raise InputError(f"{path}:{first.line}: {first.path}: {first.message}")
    return descriptor_from_data(path, located.data, located.line), located.data


def descriptor_from_data(path: Path, d: dict[str, Any], line: Callable[[Pointer], int] = lambda _: 1) -> AppDescriptor:
    """The descriptor made from data that passed the app schema; `line` finds a value's line for errors."""
    root = path.parent
    services = tuple(
        ServiceSpec(
            name=s["name"],
            language=s.get("language", "unknown"),
            workload_kind=s["workload"]["kind"],
            workload=s["workload"]["name"],
            containers=tuple(s.get("containers", [s["name"]])),
            ports=tuple(Port(p["name"], int(p["port"])) for p in s.get("ports", [])),
            source=s.get("source"),
            aliases=tuple(s.get("aliases", [])),
            versions=tuple(Version(v["version"], v["workload"]["kind"], v["workload"]["name"])
                           for v in s.get("versions", [])),
            lint=_command(s.get("build", {}), "lint"),
            test=_command(s.get("build", {}), "test"),
            instrument=s.get("build", {}).get("instrument", True),
        )
        for s in d["services"]
    )
    app = AppDescriptor(
        name=d["name"],
        version=str(d["version"]),
        root=root,
        manifests_dir=root / d.get("manifests", "manifests"),
        source_dir=root / d["source"] if d.get("source") else None,
        common=tuple(d.get("common", [])),
        entry=d["entry"],
        services=services,
        edges=tuple((e[0], e[1]) for e in d.get("edges", [])),
        sites=tuple(Site(s["name"], s.get("zone", ""), s.get("role", "active")) for s in d.get("sites", [])),
        lint_command=tuple(d.get("build", {}).get("lint", [])),
        test_command=tuple(d.get("build", {}).get("test", [])),
        load=tuple(d.get("load", [])),
        telemetry=tuple(d.get("telemetry", [])),
        fault_controls=tuple(d.get("fault_controls", [])),
        found_in=tuple(((e[0], e[1]), e[2]) for e in d.get("edges", []) if len(e) > 2),
        upstream=_upstream(d.get("upstream")),
        base_image=_base_image(d.get("images", {}).get("base"), root),
        from_images=tuple((ref, _base_image(v, root)) for ref, v in d.get("images", {}).get("from", {}).items()),
        instrument=_instrumentation(d.get("images", {}).get("instrument", {})),
        signals=signals_from_data(d.get("signals")),
        probe=d.get("probe"),
        log_format=_log_format(d.get("signals", {}).get("logs"), path, line),
    )
    _check_references(app, path, line)
    _check_recipe_files(app, path, line)
    return app


def _instrumentation(data: dict[str, Any]) -> Instrumentation:
    return Instrumentation(str(data.get("java", "")), tuple(data.get("python", [])))


def _upstream(u: dict[str, Any] | None) -> Upstream | None:
    if not u:
        return None
    return Upstream(str(u["repository"]), str(u["version"]), u.get("commit"), str(u.get("path", "")),
                    tuple(UpstreamFile(f["path"], f["sha256"]) for f in u["files"]))


def _log_format(data: dict[str, Any] | None, path: Path, line_of: Callable[[Pointer], int]) -> LogFormat:
    try:
        return log_format(data)
    except InputError as e:  # "pattern: ...": the key at fault, placed in the file here
        key = str(e).partition(":")[0]
        raise InputError(f"{path}:{line_of(('signals', 'logs', key))}: signals.logs.{e}") from None


def _command(build: dict[str, Any], what: str) -> tuple[str, ...] | None:
    return None if what not in build else tuple(build[what])


def _base_image(value: str | dict | None, root: Path) -> BaseImage:
    if value is None:
        return BaseImage()
    if isinstance(value, str):
        return BaseImage(ref=value)
    return BaseImage(suite=value["suite"], packages=tuple(value["packages"]), python=tuple(value.get("python", [])),
                     env=tuple(sorted((str(k), str(v)) for k, v in (value.get("env") or {}).items())),
                     files=tuple(sorted((dest, root / src) for dest, src in (value.get("files") or {}).items())),
                     entrypoint=tuple(value.get("entrypoint", [])), cmd=tuple(value.get("cmd", [])))


def _check_recipe_files(app: AppDescriptor, path: Path, line_of: Callable[[Pointer], int]) -> None:
    """A recipe's files are the app folder's own: nothing outside it goes into an image."""
    recipes = [(("images", "base"), app.base_image)] + [(("images", "from", ref), b) for ref, b in app.from_images]
    inside = app.root.resolve()
    for pointer, recipe in recipes:
        for dest, src in recipe.files:
            where = f"{path}:{line_of(pointer)}: {'.'.join(pointer)}: files: {dest}"
            shown = os.path.relpath(src, app.root)
            if not src.resolve().is_relative_to(inside):
                raise InputError(f"{where}: {shown} is outside the app's folder; copy it there")
            if not src.is_file():
                raise InputError(f"{where}: {shown} is not a file in the app's folder")


def _check_references(app: AppDescriptor, path: Path, line_of: Callable[[Pointer], int]) -> None:
    names = app.service_names
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            # two services of one name collide in every id derived from it (candidates, drafts)
            raise InputError(f"{path}:{line_of(('services', i))}: services[{i}]: {name!r} is already "
                             f"services[{seen[name]}]; several workloads of one service are its `versions`")
        seen[name] = i
    for i, (a, b) in enumerate(app.edges):
        for end in (a, b):
            if end not in names:
                line = line_of(("edges", i))
                raise InputError(
                    f"{path}:{line}: edges[{i}]: {end!r} is not a service of {app.name}{suggest(end, names)}"
                )
    for key in ("load", "telemetry", "fault_controls"):
        for name in getattr(app, key):
            if name not in names:
                line = line_of((key,))
                raise InputError(f"{path}:{line}: {key}: {name!r} is not a service{suggest(name, names)}")
    if app.entry not in names:
        raise InputError(
            f"{path}:{line_of(('entry',))}: entry: {app.entry!r} is not a service{suggest(app.entry, names)}"
        )
    probed = (app.probe or {}).get("service")
    if probed is not None and probed not in names:
        raise InputError(f"{path}:{line_of(('probe', 'service'))}: probe.service: {probed!r} is not a "
                         f"service{suggest(probed, names)}")
