"""The other sites of a two-site app, observed beside every window of the site under fault.

Every platform answers `other_sites()` (the protocol's; empty where an app runs one site, a
namespace per other site on the kubernetes platform); the validator then samples each other site
through its own platform for the same window, at the same time, and writes it as
`windows/sites/<site>/<window>.json` (site_rule.py judges them). Nothing is ever changed there:
the journal and every change go to the active site only.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor

from faultkit.catalog.model import Probe
from faultkit.observe.sampler import Sampler, WindowSpec
from faultkit.observe.window import Window
from faultkit.platforms.base import Platform
from faultkit.validators.site_rule import site_window


class SiteSamplers:
    """One sampler per other site; `observe` runs them beside the active site's window."""

    def __init__(self, platforms: Mapping[str, Platform], services: tuple[str, ...], probe: Probe | None,
                 continuous_probe: bool, record_sources: bool = False) -> None:
        self.samplers = {site: Sampler(p, services, probe, continuous_probe=continuous_probe,
                                       record_sources=record_sources)
                         for site, p in sorted(platforms.items())}
        self.pool = ThreadPoolExecutor(max_workers=max(1, len(self.samplers)))

    @property
    def sites(self) -> list[str]:
        return list(self.samplers)

    def start(self, spec: WindowSpec) -> dict[str, Future[Window]]:
        """Start every other site's window named after `spec`; `finish` collects them."""
        return {site: self.pool.submit(s.window, WindowSpec(site_window(spec.name, site), spec.seconds, spec.interval))
                for site, s in self.samplers.items()}

    @staticmethod
    def finish(started: dict[str, Future[Window]]) -> dict[str, Window]:
        return {site: future.result() for site, future in started.items()}

    def close(self) -> None:
        for s in self.samplers.values():
            s.close()
        self.pool.shutdown(wait=False, cancel_futures=True)
