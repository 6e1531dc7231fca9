"""`catalog export --format incident-records`: each admitted fault as an incident record.

The record has the fields of the incident-report benchmark (title, summary, impact, root cause,
mitigation, timeline). Title, summary and impact are what a model under test would read, so they
describe symptoms only: the user-visible request that fails and the measured rates. They never
name the responsible artifact, the target service or its aliases, the changed field or values,
the patch, or the mechanism ("information leakage"); `leak_terms` lists what is kept out and
`leaks` checks every sentence before it is used. Root cause, mitigation and the grounded labels
(key evidence, causal chain, checkpoints: the bundle's labels.json) are the grader's ground truth.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath
from statistics import fmean
from typing import Any

from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.bundles import read_json
from faultkit.catalog.model import Entry
from faultkit.catalog.patches import safe_path
from faultkit.catalog.release import Custody, admitted, stored_labels
from faultkit.catalog.vocab import ACTIONS
from faultkit.errors import InputError
from faultkit.workspace import Workspace

FORMAT = "faultkit/incident-records/v1"
# Words that name how a fault was made rather than what users saw.
MECHANISM_WORDS = (
    "patch",
    "manifest",
    "config",
    "configuration",
    "setting",
    "rollout",
    "inject",
    "fault",
    "image",
    "commit",
    "variable",
)


@dataclass(frozen=True)
class Rates:
    errors: float
    logs: float
    requests: float


@dataclass(frozen=True)
class Windows:
    """The bundle's observation windows, grouped by phase."""

    before: list[dict[str, Any]]
    after: list[dict[str, Any]]
    recovery: list[dict[str, Any]]


def leak_terms(entry: Entry, app: AppDescriptor) -> list[str]:
    """Every name or value that would give the root cause away if the summary contained it."""
    terms = [
        entry.artifact.ref,
        *entry.artifact.aliases,
        entry.target.service,
        entry.target.workload or "",
        entry.target.container or "",
        entry.mechanism,
    ]
    terms += PurePosixPath(entry.artifact.ref).parts
    spec = app.service(entry.target.service)
    terms += [spec.workload, *spec.containers, *spec.aliases, *(spec.source or "").split("/")]
    if entry.config:
        c = entry.config
        terms += [c.field, *c.field.split("."), c.old or "", c.new or "", c.workload, c.container]
    if entry.code:
        terms += [entry.code.patch, PurePosixPath(entry.code.patch).name, entry.code.marker]
    if entry.direct:
        terms += [entry.direct.action, *entry.direct.action.split("-")]
    if entry.log:
        terms.append(entry.log.message)
    terms += MECHANISM_WORDS
    # the app's own name is what every record is about, not a clue, even where a source path holds it
    # (Bank of Anthos' Java package is anthos.samples.bankofanthos)
    return sorted({t for t in terms if _meaningful(t) and t.lower() != app.name.lower()}, key=str.lower)


def _meaningful(term: str) -> bool:
    # Short numbers ("1", "0") cannot be kept out of text that reports rates; ports and the like can.
    return bool(term) and len(term) >= 3 and term.lower() not in ("env", "spec", "src", "app")


def leaks(text: str, terms: list[str]) -> list[str]:
    """The terms found in `text` as whole words, case-insensitively."""
    return [t for t in terms if re.search(rf"(?<![\w.-]){re.escape(t)}(?![\w-])", text, re.I)]


def load_windows(workspace: Workspace, entry: Entry) -> Windows | None:
    v = entry.validation
    if not v or not v.bundle:
        return None
    folder = safe_path(workspace.root, v.bundle, "validation.bundle")
    if not (folder / "windows").is_dir():
        return None
    found = [read_json(folder, f"windows/{p.name}") for p in sorted((folder / "windows").glob("*.json"))]
    phase = lambda prefix: [w for w in found if str(w.get("name", "")).startswith(prefix)]  # noqa: E731
    return Windows(phase("before"), phase("after"), phase("recovery"))


def rates(windows: list[dict[str, Any]]) -> Rates | None:
    points = [p for w in windows for p in w.get("points", [])]
    if not points:
        return None
    avg = lambda key: fmean(float(p.get(key, 0.0)) for p in points)  # noqa: E731
    return Rates(avg("errors_per_min"), avg("error_logs_per_min"), avg("requests_per_min"))


def when(value: Any) -> str:
    """A window timestamp as ISO 8601 UTC (bundles may hold epoch seconds or ISO text)."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def record(workspace: Workspace, entry: Entry, app: AppDescriptor, digest: str = "") -> dict[str, Any]:
    terms = leak_terms(entry, app)
    windows = load_windows(workspace, entry)
    before = rates(windows.before) if windows else None
    after = rates(windows.after) if windows else None
    request = _request(entry, terms)
    title = _first_clean(
        [f"{_symptom(entry).capitalize()} on {request} in {app.name}", f"{_symptom(entry).capitalize()} in {app.name}"],
        terms,
    )
    rec: dict[str, Any] = {
        "id": "INC-" + hashlib.sha256(entry.id.encode()).hexdigest()[:10],
        "fault": entry.id,
        "app": entry.app,
        "title": title,
        "summary": _summary(entry, app, request, before, after, windows, terms),
        "impact": _impact(entry, app, request, after, terms),
        "root_cause": _root_cause(entry),
        "mitigation": _mitigation(entry),
        "timeline": _timeline(entry, windows, before, after),
    }
    labels = stored_labels(workspace, entry, digest) if digest else None
    if labels:
        rec["labels"] = {k: labels[k] for k in ("evidence", "chain", "counts")}
    for key in ("title", "summary", "impact"):
        found = leaks(rec[key], terms)
        if found:  # a template bug, never user data: refuse rather than publish a leak
            raise InputError(f"{entry.id}: the {key} of its incident record would reveal {found[0]!r}")
    return rec


def _request(entry: Entry, terms: list[str]) -> str:
    p = entry.probe
    path = p.path.split("?", 1)[0]
    candidate = f"{p.method} {path}"
    return candidate if not leaks(candidate, terms) else f"a user-facing {p.method} request"


def _symptom(entry: Entry) -> str:
    return {
        "errors": "elevated server errors",
        "error-logs": "a surge of error log events",
        "restart": "service instances restarting",
        "oom-restart": "service instances restarting",
        "unavailable": "requests going unanswered",
    }.get(entry.effect, "degraded requests")


def _first_clean(options: list[str], terms: list[str]) -> str:
    return next((o for o in options if not leaks(o, terms)), options[-1])


def _summary(
    entry: Entry,
    app: AppDescriptor,
    request: str,
    before: Rates | None,
    after: Rates | None,
    windows: Windows | None,
    terms: list[str],
) -> str:
    start = when(windows.after[0].get("start")) if windows and windows.after else None
    lead = f"Starting {start}, users" if start else "Users"
    p = entry.probe
    sentences = [
        f"{lead} of {app.name} saw {_symptom(entry)}: {request} did not return the expected HTTP {p.expect_status}."
    ]
    if before and after:
        sentences.append(
            f"Server errors went from {before.errors:.1f} to {after.errors:.1f} per minute and "
            f"error log events from {before.logs:.1f} to {after.logs:.1f} per minute, while the "
            f"application kept serving about {after.requests:.0f} requests per minute."
        )
    return " ".join(s for s in sentences if not leaks(s, terms))


def _impact(entry: Entry, app: AppDescriptor, request: str, after: Rates | None, terms: list[str]) -> str:
    share = (
        f"about {100 * after.errors / after.requests:.0f}% of requests failed"
        if after and after.requests
        else ("requests failed")
    )
    text = (
        f"{request} in {app.name} was degraded: {share}. {len(entry.scope)} of {len(app.services)} "
        "services sit on the affected request paths."
    )
    return text if not leaks(text, terms) else f"Users of {app.name} were affected: {share}."


def _root_cause(entry: Entry) -> str:
    t = entry.target
    where = f"{t.service}" + (f" (workload {t.workload}, container {t.container})" if t.workload else "")
    if entry.config:
        c = entry.config
        text = (
            f"The {c.field} setting of {c.workload}/{c.container} was changed from {c.old!r} to "
            f"{c.new!r} ({c.kind}) in the deployment manifest of {where}."
        )
        if c.loaded_from:
            text += f" The workload wrote it over the value its container loads from {c.loaded_from}."
    elif entry.code:
        text = (
            f"A code change to {where} ({entry.code.update}) carried a defect: {entry.code.defect}. "
            f"It ships in {entry.artifact.ref} (patch {entry.code.patch}); requests that reach it: "
            f"{', '.join(entry.code.requests)}."
        )
    else:
        assert entry.direct
        action = ACTIONS[entry.direct.action]
        params = ", ".join(f"{k}={v}" for k, v in sorted(entry.direct.params.items()))
        text = (
            f"{action.summary.capitalize()} ({entry.direct.action}{': ' + params if params else ''}) "
            f"on {where} at {entry.level} level."
        )
    if entry.log:
        text += f" {entry.log.service} logs {entry.log.message!r}."
    chain = entry.raw.get("causal_chain")
    if chain and chain.get("propagation"):
        text += " Propagation: " + " -> ".join(chain["propagation"]) + "."
    return f"{text} Responsible artifact: {entry.artifact.ref}."


def _mitigation(entry: Entry) -> str:
    check = entry.artifact_check
    verify = {
        "build": f"the running build of {check.service or entry.target.service} no longer contains "
        f"the defective change",
        "setting": f"{check.field} of {check.workload}/{check.container} reads {check.value!r} again",
        "action": "the intervention has ended",
    }.get(check.kind, "the artifact is back to a correct state")
    return (
        f"{entry.recovery} Verify that {verify} and that {entry.probe.method} {entry.probe.path} "
        f"returns HTTP {entry.probe.expect_status}."
    )


def _timeline(entry: Entry, windows: Windows | None, before: Rates | None, after: Rates | None) -> list[dict]:
    v = entry.validation
    events: list[dict[str, str]] = []
    if windows and windows.before and before:
        events.append(
            {
                "at": when(windows.before[0].get("start")),
                "event": f"Baseline: {before.errors:.1f} server errors/min, {before.requests:.0f} requests/min.",
            }
        )
    if windows and windows.after and after:
        events.append(
            {
                "at": when(windows.after[0].get("start")),
                "event": f"Symptoms: {after.errors:.1f} server errors/min, {after.logs:.1f} error log events/min.",
            }
        )
    if windows and windows.recovery:
        recovered = rates(windows.recovery)
        events.append({"at": when(windows.recovery[0].get("start")), "event": "Mitigation applied: " + entry.recovery})
        if recovered:
            events.append(
                {
                    "at": when(windows.recovery[-1].get("end")),
                    "event": f"Recovered: {recovered.errors:.1f} server errors/min.",
                }
            )
    if v:
        events.append({"at": v.at, "event": f"Verdict recorded: {v.verdict} on {v.platform}."})
    return events


def incident_records(workspace: Workspace, custody: Custody) -> dict[str, Any]:
    included, _ = admitted(workspace, custody)
    apps = {name: load_app(workspace, name) for name in sorted({e.app for e, _, _ in included})}
    return {"format": FORMAT, "records": [record(workspace, e, apps[e.app], digest) for e, digest, _ in included]}
