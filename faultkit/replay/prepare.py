"""Before the clock starts: the platform runs the schedule's app, healthy, with every scheduled
setting at its old value and every action possible; and every code fault is built, as the
validator builds it (the entry's patch applied to a copy of the app's source, then
`platform.build`), so that the clock only waits for rollouts. The service's own lint and tests
are not run again: the release holds only faults whose build passed them when admitted.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from faultkit.apps.descriptor import AppDescriptor
from faultkit.catalog.model import Entry
from faultkit.catalog.patches import safe_path
from faultkit.errors import InputError, PlatformError
from faultkit.platforms.base import Platform
from faultkit.process import run
from faultkit.replay.plan import SchedulePlan
from faultkit.validators.pipeline import check_platform
from faultkit.workspace import Workspace


def check_healthy(platform: Platform, plan: SchedulePlan, wait_s: float = 30.0) -> None:
    """Raise unless the app is up, every instance ready, and every scheduled setting at its old value."""
    for entry in plan.entries.values():
        check_platform(platform, entry)
    deadline = time.monotonic() + wait_s
    while True:
        unready = sorted({i.service for i in platform.instances() if not i.ready})
        if not unready:
            break
        if time.monotonic() > deadline:
            raise PlatformError(f"{', '.join(unready)} not ready; see `faultkit status`, then `faultkit down` "
                                "and `faultkit up`; nothing was changed")
        time.sleep(0.5)
    for entry in plan.entries.values():
        if entry.config:
            c = entry.config
            deployed = platform.read_field(c.workload, c.container, c.field)
            if deployed != c.written:
                raise PlatformError(f"{c.workload}/{c.container} {c.field} is deployed as {deployed!r}, not "
                                    f"{entry.id}'s old value {c.written!r}; run `faultkit recover`; nothing was changed")
    if platform.active_actions():
        raise PlatformError("direct actions are already in force on the platform; run `faultkit recover`; "
                            "nothing was changed")


def build_code_fault(workspace: Workspace, platform: Platform, app: AppDescriptor, entry: Entry) -> str:
    """The patched build of one code fault; returns its id."""
    assert entry.code is not None
    if app.source_dir is None:
        raise InputError(f"{app.name}: the app has no source folder; {entry.id} needs one")
    tmp = Path(tempfile.mkdtemp(prefix="faultkit-src-"))
    try:
        src = tmp / app.source_dir.relative_to(app.root)
        shutil.copytree(app.source_dir, src, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
        patch = safe_path(workspace.root, entry.code.patch, "patch")
        result = run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=tmp)
        if not result.ok:
            raise InputError(f"{entry.code.patch}: does not apply to {app.name}'s source any more "
                             f"({result.tail(1)}); validate {entry.id} again and rebuild the release")
        return platform.build(entry.target.service, source_root=str(src)).id
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_all(workspace: Workspace, platform: Platform, app: AppDescriptor, plan: SchedulePlan,
              progress: Callable[[str], None]) -> dict[str, str]:
    """Every code fault's build, by fault id, in the schedule's order."""
    builds: dict[str, str] = {}
    for fault, entry in plan.entries.items():
        if entry.code:
            progress(f"building {fault}")
            builds[fault] = build_code_fault(workspace, platform, app, entry)
    return builds
