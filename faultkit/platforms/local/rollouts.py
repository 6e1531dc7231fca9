"""The rollout controller: each workload's build, and the surge-then-replace of its replicas.

A rollout starts a full set of new replicas beside the old ones and waits for them to become
ready; then every old replica stops (no old replica keeps serving). A new build that never gets
ready is rolled back; a new spec (a patched setting) stays applied and the rollout reports it.
"""

from __future__ import annotations

import threading
import time

from faultkit.errors import NotReady, PlatformError
from faultkit.platforms.base import short_id
from faultkit.platforms.local.kubelet import Kubelet

POLL_S = 0.1


class Rollouts:
    def __init__(self, kubelet: Kubelet, builds: dict[str, str]) -> None:
        self.kubelet = kubelet
        self.builds = dict(builds)  # workload -> the build id it runs
        self.locks = {w: threading.Lock() for w in builds}  # one rollout of a workload at a time

    def build(self, workload: str) -> str | None:
        return self.builds.get(workload)

    def to_build(self, workload: str, build_id: str, timeout: float) -> None:
        """Roll the workload to another build; back to the one it ran when it does not get ready."""
        with self.locks[workload]:
            previous = self.builds[workload]
            self.builds[workload] = build_id
            try:
                self._roll(workload, build_id, timeout, keep_on_failure=False)
            except PlatformError as e:
                self.builds[workload] = previous
                raise NotReady(f"{e}; rolled back to build {short_id(previous)}") from None

    def restart(self, workload: str, timeout: float) -> None:
        """Roll the workload onto its new spec, same build; the spec stays when it does not get ready."""
        with self.locks[workload]:
            self._roll(workload, self.builds[workload], timeout, keep_on_failure=True)

    def _roll(self, w: str, build_id: str, timeout: float, keep_on_failure: bool) -> None:
        """Start new replicas, wait for them, then stop every old one (or undo)."""
        old, new = self.kubelet.surge(w, build_id)
        deadline = time.time() + timeout
        while time.time() < deadline and not all(r.ready for r in new):
            time.sleep(POLL_S)
        ok = all(r.ready for r in new)
        name = self.kubelet.service_name(w)
        if not ok and not keep_on_failure:
            self.kubelet.keep(w, old, drop=new)
            raise NotReady(f"rollout of {name} to build {short_id(build_id)} did not become ready within {timeout:g}s")
        self.kubelet.keep(w, new, drop=old)
        if not ok:
            raise NotReady(
                f"rollout of {name} did not become ready within {timeout:g}s; "
                "the new spec stays applied (revert the change to recover)"
            )
