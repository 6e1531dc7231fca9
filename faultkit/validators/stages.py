"""The stages before any change: lint, patch, build, marker, baseline (SPEC.md section 3).

Each records its result in the stage log and returns whether validation goes on. A failure here
is a property of the fault (it does not lint, apply, build or mark) and becomes a rule of the
verdict; an application that is not healthy before any change is not, and raises instead.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from faultkit.apps.descriptor import AppDescriptor
from faultkit.catalog.lint import Report
from faultkit.catalog.model import Entry
from faultkit.catalog.patches import safe_path
from faultkit.errors import CheckFailed, InputError, PlatformError
from faultkit.platforms.base import Build, Platform, short_id
from faultkit.process import run
from faultkit.validators.app_changes import deployed_build
from faultkit.validators.stagelog import StageLog
from faultkit.workspace import Workspace


@dataclass
class StaticStages:
    """Runs the static stages in order; keeps the patched source tree, the new build and the
    baseline build for the cycles."""

    log: StageLog
    workspace: Workspace
    platform: Platform
    entry: Entry
    app: AppDescriptor
    rollout_timeout_s: float
    tmp: Path | None = None
    new_build: Build | None = None
    baseline_build: str | None = None

    def run(self, report: Report) -> bool:
        return self.check_lint(report) and self.apply_patch() and self.build() and self.check_marker() \
            and self.baseline()

    def cleanup(self) -> None:
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def check_lint(self, report: Report) -> bool:
        self.log.begin("lint")
        mine = [f for f in report.findings if f.severity == "error"]
        detail = "; ".join(f.render() for f in mine[:5])
        return self.log.stage("lint", "failed" if mine else "ok", detail or "clean", measured=len(mine), threshold=0)

    def _source_copy(self) -> Path:
        """The app's source folder inside the temporary tree the patch is applied to."""
        if self.app.source_dir is None:
            raise InputError(f"{self.app.name}: the app has no source folder; a code fault needs one")
        assert self.tmp is not None
        return self.tmp / self.app.source_dir.relative_to(self.app.root)

    def apply_patch(self) -> bool:
        if not self.entry.code:
            return self.log.stage("patch", "skipped")
        self.log.begin("patch")
        self.tmp = Path(tempfile.mkdtemp(prefix="faultkit-src-"))
        src = self._source_copy()
        assert self.app.source_dir is not None  # _source_copy checked it
        shutil.copytree(self.app.source_dir, src, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
        patch = safe_path(self.workspace.root, self.entry.code.patch, "patch")
        result = run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=self.tmp)
        return self.log.stage(
            "patch",
            "ok" if result.ok else "failed",
            result.tail() or "applied cleanly",
            measured="applies" if result.ok else "does not apply",
            threshold="applies",
        )

    def build(self) -> bool:
        if not self.entry.code:
            return self.log.stage("build", "skipped")
        self.log.begin("build")
        assert self.tmp is not None
        service = self.entry.target.service
        source = self.app.service_source(service)
        if source is None:
            raise InputError(f"{self.app.name}: {service} has no source folder; a code fault needs one")
        for what, cmd in zip(("lint", "tests"), self.app.checks(service), strict=True):
            if not cmd or self.platform.checks_in_build:  # a platform that builds images runs them in the image
                continue
            self.log.progress("build", f"running the service's {what}")
            result = run(cmd, cwd=self.tmp / source, timeout=600)
            if not result.ok:
                return self.log.stage(
                    "build",
                    "failed",
                    f"the service's {what} failed: {' '.join(cmd)}\n{result.tail(30)}",
                    measured=f"{what} exit {result.code}",
                    threshold="exit 0",
                )
        try:
            self.new_build = self.platform.build(service, source_root=str(self._source_copy()))
        except CheckFailed as e:
            tail = "\n".join(e.output.splitlines()[-30:])
            return self.log.stage("build", "failed", f"{e}\n{tail}", measured=f"{e.what} failed",
                                  threshold="exit 0")
        return self.log.stage(
            "build",
            "ok",
            "the service's lint and unit tests pass",
            build=self.new_build.id,
            measured="exit 0",
            threshold="exit 0",
        )

    def check_marker(self) -> bool:
        if not self.entry.code or self.new_build is None:
            return self.log.stage("marker", "skipped")
        self.log.begin("marker")
        marker, service = self.entry.code.marker, self.entry.target.service
        in_new = self.platform.build_contains(self.new_build.id, marker)
        earlier = [b.id for b in self.platform.builds(service) if b.id != self.new_build.id]
        in_earlier = [b for b in earlier if self.platform.build_contains(b, marker)]
        ok = in_new and not in_earlier
        detail = (
            f"{marker!r} found in the new build and in none of {len(earlier)} earlier builds"
            if ok
            else f"{marker!r} in new build: {in_new}; "
            f"in earlier builds: {', '.join(short_id(b) for b in in_earlier) or 'none'}"
        )
        return self.log.stage(
            "marker",
            "ok" if ok else "failed",
            detail,
            measured=len(in_earlier) if in_new else "absent",
            threshold="in new build, 0 earlier",
        )

    def baseline(self) -> bool:
        self.log.begin("baseline")
        deadline = time.monotonic() + self.rollout_timeout_s
        while True:
            instances = self.platform.instances()
            unready = sorted({i.service for i in instances if not i.ready})
            if not unready:
                break
            if time.monotonic() > deadline:
                # not a property of the fault: no verdict, an error the user can act on
                raise PlatformError(f"{', '.join(unready)} not ready before any change; see `faultkit status`, "
                                    "then `faultkit down` and `faultkit up`")
            time.sleep(1)
        self.baseline_build = deployed_build(self.platform, self.entry.target.service)
        if self.entry.config:
            c = self.entry.config
            deployed = self.platform.read_field(c.workload, c.container, c.field)
            if deployed != c.written:
                raise PlatformError(
                    f"{c.workload}/{c.container} {c.field} is deployed as {deployed!r}, not the entry's "
                    f"old value {c.written!r}; run `faultkit recover`, or `faultkit down` and `up`"
                )
        return self.log.stage("baseline", "ok", f"{len(instances)} instances ready", build=self.baseline_build,
                              measured=0, threshold=0)
