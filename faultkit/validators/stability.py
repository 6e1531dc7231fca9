"""`validate --stability`: a second verdict, at another window length or in an independent run.

A fault admitted on one lucky window is not a case. The first run is recorded in the entry as any
validation is; when it admits, a second run (its own bundle, its own cycles) is judged and
recorded beside it, under `validation.stability`. Both admitted: the entry is admitted. Admitted
once and not the second time: the entry's verdict is `flaky`, with the second run's failed rules,
so `catalog build` leaves it out with the reason. A first verdict that does not admit is not run
again: it is already out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from faultkit.bundles import verify_bundle
from faultkit.catalog.writeback import record_validation, validation_block
from faultkit.platforms.base import Platform
from faultkit.validators.faults import load_fault
from faultkit.validators.judge import Verdict
from faultkit.validators.params import ValidationParams
from faultkit.validators.pipeline import validate
from faultkit.validators.stagelog import Progress, no_progress
from faultkit.workspace import Workspace


@dataclass(frozen=True)
class Stable:
    """Both runs of a stability validation; `second` is None when the first did not admit."""

    status: str
    first: Verdict
    first_bundle: Path
    second: Verdict | None
    second_bundle: Path | None


def validate_stable(workspace: Workspace, platform: Platform, fault_id: str, params: ValidationParams,
                    second_window_s: float, evidence: Path | None = None, progress: Progress = no_progress,
                    timeout_s: float | None = None) -> Stable:
    first, folder = validate(workspace, platform, fault_id, params, evidence, progress, timeout_s)
    if first["status"] != "admitted":
        return Stable(first["status"], first, folder, None, None)
    progress("stability", f"second verdict at {second_window_s:g}s windows")
    second_params = replace(params, window_s=second_window_s)
    second, folder2 = validate(workspace, platform, fault_id, second_params, evidence, progress, timeout_s,
                               record=False)
    if second["status"] == "aborted":
        return Stable("aborted", first, folder, second, folder2)  # the entry keeps its single verdict
    entry, _ = load_fault(workspace, fault_id)
    status = "admitted" if second["status"] == "admitted" else "flaky"
    failed = second["failed_rules"] if status == "flaky" else []
    block = validation_block(workspace, entry, folder, verify_bundle(folder), status=status, failed_rules=failed,
                             platform=platform.name, window_s=params.window_s, repeat=params.repeat)
    block["stability"] = second_record(workspace, folder2, second, second_params)
    record_validation(workspace, entry, block)
    return Stable(status, first, folder, second, folder2)


def second_record(workspace: Workspace, folder: Path, verdict: Verdict, params: ValidationParams) -> dict[str, Any]:
    """validation.stability: the second run's verdict and what backs it."""
    resolved = folder.resolve()
    record: dict[str, Any] = {
        "verdict": verdict["status"],
        "bundle": resolved.relative_to(workspace.root).as_posix()
        if resolved.is_relative_to(workspace.root) else str(folder),
        "bundle_digest": verify_bundle(folder),
        "window_s": params.window_s,
        "repeat": params.repeat,
    }
    if verdict["failed_rules"]:
        record["failed_rules"] = list(verdict["failed_rules"])
    return record
