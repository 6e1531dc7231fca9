"""A schedule checked against the release it names, as the steps of every invocation boundary.

The release must be the one in dist/ (same version, same digest) and hold every scheduled fault:
the run then injects exactly what was validated. Reverts due after the last invocation happen at
the end of the run, so no fault is left active.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.catalog.model import Entry, entry_from_data
from faultkit.errors import InputError
from faultkit.names import check_name
from faultkit.schedules import document
from faultkit.schedules.sources import load_release
from faultkit.workspace import Workspace


@dataclass(frozen=True)
class Step:
    """One change due at a boundary, in the schedule's order."""

    invocation: int
    op: str  # "inject" or "revert"
    fault: str
    case: int


@dataclass(frozen=True)
class SchedulePlan:
    name: str  # the schedule file's stem: runs/<name>/
    file_digest: str
    text: str
    doc: dict[str, Any]
    entries: dict[str, Entry]  # by fault id, every scheduled fault
    invocations: int
    interval_s: float  # the schedule's own interval; the run may shorten it

    def steps(self, invocation: int) -> list[Step]:
        """The changes due at the boundary before `invocation`: reverts first, then injections.
        The last boundary (invocation == self.invocations) takes every revert due at or after it."""
        last = invocation >= self.invocations
        due = [e for e in self.doc["events"]
               if e["invocation"] == invocation or (last and e["invocation"] > invocation)]
        ordered = [e for e in due if e["op"] == "revert"] + [e for e in due if e["op"] == "inject"]
        return [Step(invocation, e["op"], e["fault"], e["case"]) for e in ordered]


def load_plan(workspace: Workspace, path: Path) -> SchedulePlan:
    doc = document.load(path)
    release = doc["release"]
    check_name(path.stem, f"{path}: schedule file name")  # names the run folder, runs/<stem>/
    check_name(release["version"], f"{path}: release.version")  # names the release file in dist/
    file = workspace.dist_dir / f"catalog-{release['version']}.json"
    if not file.is_file():
        raise InputError(f"{path}: names release {release['version']}, which is not in dist/; "
                         "build it with `faultkit catalog build`, or export the schedule from the release in dist/")
    source = load_release(file)
    if source.digest != release["digest"]:
        raise InputError(f"{path}: names release {release['version']} with digest {release['digest'][:19]}..., "
                         f"but dist/{file.name} has {source.digest[:19]}...; export the schedule again")
    by_id = {str(e.get("id")): e for e in source.entries}
    wanted = sorted({e["fault"] for e in doc["events"]})
    missing = [f for f in wanted if f not in by_id]
    if missing:
        raise InputError(f"{path}: {', '.join(missing)} not in release {release['version']}; "
                         "export the schedule from that release")
    entries = {f: entry_from_data(by_id[f]) for f in wanted}
    other = sorted({e.app for e in entries.values()} - {doc["app"]})
    if other:
        raise InputError(f"{path}: schedules faults of {', '.join(other)} in a schedule for {doc['app']}")
    text = path.read_text("utf-8")
    return SchedulePlan(path.stem, "sha256:" + hashlib.sha256(text.encode()).hexdigest(), text, doc, entries,
                int(doc["stats"]["invocations"]), float(doc["params"]["interval_s"]))
