"""`faultkit build`'s core: the images of an app's services, a fault's patched image and its marker
check, and the push to a user's registry, returned as data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from faultkit.apps.descriptor import load_app, suggest
from faultkit.catalog.model import Entry
from faultkit.catalog.patches import safe_path
from faultkit.errors import InputError
from faultkit.images import engine
from faultkit.images.marker import check_marker
from faultkit.images.push import push
from faultkit.images.records import ImageBuild, MarkerCheck, PushResult
from faultkit.images.service import build_service, buildable
from faultkit.workspace import Workspace


@dataclass(frozen=True)
class AppImages:
    app: str
    builds: tuple[ImageBuild, ...]
    marker: MarkerCheck | None  # with a fault: where its marker is in the patched image
    pushed: tuple[PushResult, ...]


def build_app_images(workspace: Workspace, app_name: str, services: tuple[str, ...] = (), fault_id: str | None = None,
                     registry: str | None = None, client: Any = None) -> AppImages:
    """Build the images of `services` (default: every service with source; with a fault, its target)."""
    app = load_app(workspace, app_name)
    entry = load_code_fault(workspace, fault_id, app_name) if fault_id else None
    if entry is not None and entry.code is not None:
        services = services or (entry.target.service,)
    names = services or buildable(app)
    for name in names:
        app.service(name)
    c = client or engine.client()
    patch = safe_path(workspace.root, entry.code.patch, "patch") if entry and entry.code else None
    builds = []
    for name in names:
        target = entry is not None and name == entry.target.service
        builds.append(build_service(workspace, app, name, patch=patch if target else None,
                                    fault_id=fault_id if target else None, client=c))
    marker = None
    if entry is not None and entry.code is not None:
        built = next((b for b in builds if b.service == entry.target.service), None)
        if built is not None:
            marker = check_marker(c, app, built.service, built.id, entry.code.marker)
    pushed = tuple(push(c, b, registry) for b in builds) if registry else ()
    return AppImages(app=app.name, builds=tuple(builds), marker=marker, pushed=pushed)


def load_code_fault(workspace: Workspace, fault_id: str, app_name: str) -> Entry:
    from faultkit.catalog.lint import lint

    paths = sorted(workspace.catalog_dir.glob(f"*/{fault_id}.yaml"))
    if not paths:
        ids = sorted(p.stem for p in workspace.catalog_dir.glob("*/*.yaml"))
        raise InputError(f"--fault {fault_id!r}: no such entry in the catalog{suggest(fault_id, ids)}; "
                         "`faultkit catalog lint` lists what is there")
    report = lint(workspace, paths[:1])
    if not report.entries:
        first = next((f.render() for f in report.findings if f.severity == "error"), "")
        raise InputError(f"{paths[0]}: the entry does not load ({first}); fix it first")
    entry = report.entries[0]
    if entry.code is None:
        raise InputError(f"--fault {fault_id}: a {entry.mechanism} fault has no patch; only code faults change images")
    if entry.app != app_name:
        raise InputError(f"--fault {fault_id}: the entry is for app {entry.app!r}, not {app_name!r}; "
                         f"use --app {entry.app}")
    return entry
