"""`status()` of the kubernetes platform: the app's pods as the protocol's AppStatus."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from faultkit.platforms.base import AppStatus, Instance, ServiceState, SiteState
from faultkit.platforms.kubernetes.ownership import Record


class StatusHost(Protocol):
    """What this module needs of the platform (a protocol, so the platform imports this module and
    not the other way round, not even for the type checker)."""

    name: str

    def is_up(self) -> bool: ...
    def record(self) -> Record: ...
    def instances(self, service: str | None = None) -> list[Instance]: ...
    def other_sites(self) -> Mapping[str, StatusHost]: ...


def _build(instances: list[Instance]) -> str | None:
    """The build every instance runs; None when they differ (mid-rollout) or there are none."""
    builds = {i.build for i in instances}
    return builds.pop() if len(builds) == 1 else None


def app_status(platform: StatusHost) -> AppStatus:
    if not platform.is_up():
        return AppStatus(platform.name, None)
    rec = platform.record()
    by_service: dict[str, list[Instance]] = {}
    for inst in platform.instances():
        by_service.setdefault(inst.service, []).append(inst)
    # no endpoint: a Service's address here is a port-forward this process would open only to report it
    services = {name: ServiceState(build=_build(insts), endpoint=None, instances=tuple(insts))
                for name, insts in by_service.items()}
    sites = {site: SiteState(p.record().namespace, all(i.ready for i in p.instances()))
             for site, p in platform.other_sites().items()}
    return AppStatus(platform.name, rec.app, where=f"in namespace {rec.namespace} ({rec.mode}) on {rec.server}",
                     services=services, sites=sites,
                     details={"platform": platform.name, "mode": rec.mode, "namespace": rec.namespace,
                              "context": rec.context, "server": rec.server})
