"""The bundle's inputs.json: everything the judge reads besides the observations.

The entry (without its validation record), the patch's digest, a snapshot of the application
(services, scope, dependants, sites), the platform, the toolkit and rules versions, and the run's
parameters with the screening thresholds they were judged against, and the digests of what the
verdict measured besides the entry and patch (`bindings`, issue 32: the descriptor, the target's
pinned source, the build commands, the rule settings), which `catalog build` checks.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from faultkit import __version__
from faultkit.apps.descriptor import AppDescriptor
from faultkit.catalog.bindings import bindings
from faultkit.catalog.model import Entry, thaw
from faultkit.catalog.patches import read_patch, safe_path
from faultkit.validators import screening
from faultkit.validators.params import ValidationParams
from faultkit.workspace import Workspace


class AppSnapshot(TypedDict):
    name: str
    version: str
    entry: str
    services: list[str]
    scope: list[str]  # the fault's affected scope: where the screens look
    dependants: list[str]  # direct callers of the target: where its log message may show
    sites: list[str]


class PatchRecord(TypedDict):
    path: str
    digest: str


class Thresholds(TypedDict):
    errors_per_min: float
    new_error_logs_per_min: float
    serving_fraction: float


class ParamsRecord(TypedDict):
    window_s: float
    interval_s: float
    repeat: int
    thresholds: Thresholds
    alert_raised: NotRequired[bool]  # only when the catalog asks alert-raised to decide (alert_rule.py)


class InputsRecord(TypedDict):
    entry: dict[str, Any]
    entry_digest: str
    patch: PatchRecord | None
    app: AppSnapshot
    platform: str
    toolkit: str
    rules_version: int
    params: ParamsRecord
    bindings: dict[str, str]


def app_snapshot(app: AppDescriptor, entry: Entry) -> AppSnapshot:
    target = entry.target.service
    known = target in app.service_names
    return {
        "name": app.name,
        "version": app.version,
        "entry": app.entry,
        "services": list(app.observed),
        "scope": list(app.scope(target)) if known else [target],
        "dependants": list(app.callers(target)) if known else [],
        "sites": [s.name for s in app.sites],
    }


def inputs_record(workspace: Workspace, entry: Entry, app: AppSnapshot, params: ValidationParams,
                  platform: str) -> InputsRecord:
    body = {k: v for k, v in thaw(entry.raw).items() if k != "validation"}
    patch: PatchRecord | None = None
    if entry.code:
        info = read_patch(safe_path(workspace.root, entry.code.patch, "patch"))
        patch = {"path": entry.code.patch, "digest": info.digest}
    record: InputsRecord = {
        "entry": body,
        "entry_digest": entry.digest(),
        "patch": patch,
        "app": app,
        "platform": platform,
        "toolkit": __version__,
        "rules_version": params.rules,
        "params": {
            "window_s": params.window_s,
            "interval_s": params.interval_s,
            "repeat": params.repeat,
            "thresholds": {
                "errors_per_min": screening.ERRORS_PER_MIN,
                "new_error_logs_per_min": screening.NEW_ERROR_LOGS_PER_MIN,
                "serving_fraction": screening.SERVING_FRACTION,
            },
        },
        "bindings": bindings(workspace, entry),
    }
    if params.alert_raised:  # absent otherwise, so a run that does not ask keeps every earlier byte
        record["params"]["alert_raised"] = True
    return record
