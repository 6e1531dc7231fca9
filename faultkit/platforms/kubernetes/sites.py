"""Two-site applications on a cluster: one namespace per site, every one created and owned by faultkit.

An app whose descriptor lists two sites (an active and a standby one, as the Astronomy Shop runs in
two zones) is brought up as one instance per site: namespace `<name>-<site>` for each. The active
site is the platform's own instance, where faults are injected; each other site is a platform of
its own over its own state folder (its ownership record, pod ledger), sharing the active site's
images, so the validator can observe it for real while nothing is ever changed in it.

sites.json (beside the active site's ownership record) names every site's namespace; it is part of
the platform's target, so a journal recorded on one layout is never recovered on another.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from faultkit.apps.descriptor import AppDescriptor
from faultkit.errors import PlatformError
from faultkit.platforms.kubernetes import apply
from faultkit.platforms.kubernetes.connection import Connection
from faultkit.platforms.kubernetes.namespaces import Namespaces
from faultkit.platforms.kubernetes.ownership import CREATED, Ownership
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write


class SiteHost(Protocol):
    """What this module needs of the platform (a protocol, so the platform imports this module and
    not the other way round)."""

    owner: Ownership
    conn: Connection
    workspace: Workspace
    loader_text: str
    otlp_endpoint: str

    def at_site(self: _H, state_dir: Path) -> _H: ...
    def wait_all(self, desc: AppDescriptor, namespace: str, objs: list[dict[str, Any]], timeout: float) -> None: ...
    def down(self) -> str: ...


_H = TypeVar("_H", bound=SiteHost)


@dataclass(frozen=True)
class SitePlan:
    active: str
    namespaces: dict[str, str]  # site -> namespace, the active site first

    @property
    def others(self) -> list[tuple[str, str]]:
        return [(s, ns) for s, ns in self.namespaces.items() if s != self.active]


def plan(desc: AppDescriptor, name: str) -> SitePlan | None:
    """The namespaces of a two-site app (None for an app with one site: it keeps `name` itself)."""
    if len(desc.sites) < 2:
        return None
    active = next((s.name for s in desc.sites if s.role == "active"), desc.sites[0].name)
    order = [active, *(s.name for s in desc.sites if s.name != active)]
    namespaces = {s: f"{name}-{s}" for s in order}
    for ns in namespaces.values():
        if len(ns) > 63:
            raise PlatformError(f"namespace {ns!r} for a site is longer than 63 characters; choose a shorter "
                                "--namespace")
    return SitePlan(active, namespaces)


def _path(platform: SiteHost) -> Path:
    return platform.owner.base / "sites.json"


def read(platform: SiteHost) -> SitePlan | None:
    try:
        data = json.loads(_path(platform).read_text())
    except FileNotFoundError:
        return None
    except ValueError:
        raise PlatformError(f"{_path(platform)}: not valid JSON; delete the site namespaces it named by hand, "
                            "then remove it") from None
    return SitePlan(str(data["active"]), {str(k): str(v) for k, v in data["namespaces"].items()})


def write(platform: SiteHost, sites: SitePlan) -> None:
    platform.owner.base.mkdir(parents=True, exist_ok=True)
    atomic_write(_path(platform), json.dumps({"active": sites.active, "namespaces": sites.namespaces},
                                             indent=2) + "\n")


def site_platform(platform: _H, site: str) -> _H:
    """The platform of one other site: its own state folder, the same cluster, context and loader."""
    return platform.at_site(platform.owner.base / "sites" / site)


def scaled(objs: list[dict[str, Any]], replicas: int) -> list[dict[str, Any]]:
    if replicas > 1:
        for o in objs:
            if o["kind"] == "Deployment":
                o["spec"]["replicas"] = replicas
    return objs


def apply_others(platform: SiteHost, desc: AppDescriptor, sites: SitePlan, images: dict[str, str],
                 replicas: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """Create every other site's namespace and apply the manifests there, with the active site's
    images; returns what `wait_others` waits for. Each namespace is recorded as faultkit's as soon as
    it exists, so a failure part way is undone by down."""
    applied = []
    for site, ns in sites.others:
        other = site_platform(platform, site)
        uid = Namespaces(other.conn).create(ns)
        other.owner.write(other.conn.target(ns), desc.name, CREATED, uid, images, other.loader_text)
        known = platform.owner.base / "images.json"  # the digests the nodes know the shared images by
        if known.exists():
            shutil.copyfile(known, other.owner.base / "images.json")
        objs = scaled(apply.render(desc, ns, images, platform.workspace.root, platform.otlp_endpoint), replicas)
        apply.server_side_apply(other.conn, objs, apply.field_manager(desc.name))
        applied.append((ns, objs))
    return applied


def wait_others(platform: SiteHost, desc: AppDescriptor, applied: list[tuple[str, list[dict[str, Any]]]],
                timeout: float) -> None:
    for ns, objs in applied:
        platform.wait_all(desc, ns, objs, timeout)  # the active site's digests: the same images


def others(platform: _H) -> dict[str, _H]:
    """The other sites' platforms, by site name (empty for a one-site app)."""
    sites = read(platform)
    if sites is None:
        return {}
    return {site: site_platform(platform, site) for site, _ in sites.others}


def down_others(platform: SiteHost) -> list[str]:
    """Delete every other site's namespace (each only if it is still the one faultkit created); their names."""
    gone = []
    for other in others(platform).values():
        gone.append(other.owner.require().namespace)
        other.down()
    _path(platform).unlink(missing_ok=True)
    return gone


def target_fields(platform: SiteHost) -> dict[str, str]:
    """`sites` for the platform's target: every site's namespace, the active one first."""
    sites = read(platform)
    if sites is None:
        return {}
    return {"sites": " ".join(f"{s}={ns}" for s, ns in sites.namespaces.items())}
