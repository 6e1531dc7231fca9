"""What the report shows, gathered from the catalog, the descriptors and the evidence bundles."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor, app_names, load_app
from faultkit.bundles import read_verdict
from faultkit.catalog.export import Windows, load_windows
from faultkit.catalog.lint import discover, load_entry_file
from faultkit.catalog.model import Entry
from faultkit.catalog.patches import safe_path
from faultkit.catalog.release import verdict_state
from faultkit.catalog.vocab import CATEGORIES, CATEGORY_SHARES
from faultkit.errors import FaultkitError, UsageError
from faultkit.labels.catalog_io import stored_labels
from faultkit.labels.core import app_of, label_bundle
from faultkit.report.figures import WindowFigure, window_figures
from faultkit.workspace import Workspace

# SPEC.md section 3, rule 4: the screening thresholds the after window is held against.
THRESHOLDS = {"errors_per_min": 4.0, "error_logs_per_min": 10.0}


@dataclass(frozen=True)
class Rejection:
    id: str
    status: str
    rules: tuple[str, ...]  # "rule: measured X, threshold Y"


@dataclass(frozen=True)
class ReportData:
    apps: tuple[AppDescriptor, ...]
    entries: tuple[Entry, ...]
    states: dict[str, str]  # entry id -> admitted / rejected / flaky / no-verdict / stale-...
    rejections: tuple[Rejection, ...]
    fault: Entry | None = None
    windows: Windows | None = None
    unreadable: int = 0
    notes: tuple[str, ...] = field(default=())
    verdict: dict[str, Any] | None = None
    figures: tuple[WindowFigure, ...] = ()
    labels: dict[str, Any] | None = None

    def coverage(self, app: str) -> dict[str, Counter]:
        """service -> Counter(category -> number of entries targeting it)."""
        table: dict[str, Counter] = {}
        for e in self.entries:
            if e.app == app:
                table.setdefault(e.target.service, Counter())[e.category] += 1
        return table

    def admitted_coverage(self, app: str) -> dict[str, Counter]:
        table: dict[str, Counter] = {}
        for e in self.entries:
            if e.app == app and self.states.get(e.id) == "admitted":
                table.setdefault(e.target.service, Counter())[e.category] += 1
        return table

    def category_mix(self) -> list[tuple[str, float, float]]:
        """(category, share in the catalog, production share)."""
        counts = Counter(e.category for e in self.entries)
        total = sum(counts.values()) or 1
        return [(c, counts[c] / total, CATEGORY_SHARES[c]) for c in CATEGORIES]

    def outcomes(self) -> Counter:
        return Counter(self.states.values())


def collect(workspace: Workspace, fault: str | None = None) -> ReportData:
    entries, unreadable = [], 0
    for path in discover(workspace):
        item, _ = load_entry_file(path, workspace)
        if item.entry:
            entries.append(item.entry)
        else:
            unreadable += 1
    entries.sort(key=lambda e: e.id)
    states = {e.id: _state(workspace, e) for e in entries}
    rejections = tuple(_rejection(workspace, e, states[e.id]) for e in entries if states[e.id] in ("rejected", "flaky"))
    apps = tuple(load_app(workspace, name) for name in app_names(workspace))
    chosen = _choose(workspace, entries, fault)
    windows = load_windows(workspace, chosen) if chosen else None
    folder = _bundle(workspace, chosen) if chosen else None
    verdict, figures, labels = _grounds(workspace, folder) if folder else (None, (), None)
    return ReportData(apps, tuple(entries), states, rejections, chosen, windows, unreadable, (), verdict, figures,
                      labels)


def _grounds(workspace: Workspace, folder: Path) -> tuple[dict[str, Any] | None, tuple[WindowFigure, ...],
                                                         dict[str, Any] | None]:
    """The verdict, the windows' figures and the labels a bundle's admission rests on."""
    try:
        verdict = read_verdict(folder)
    except FaultkitError:
        verdict = None
    try:
        labels = stored_labels(folder) or label_bundle(folder, app_of(workspace, folder))
    except (FaultkitError, KeyError, TypeError):
        labels = None  # not an admission in the validator's format: the page says so
    return verdict, tuple(window_figures(folder)), labels


def _state(workspace: Workspace, entry: Entry) -> str:
    try:
        return verdict_state(workspace, entry).status
    except FaultkitError:
        return "invalid"


def _rejection(workspace: Workspace, entry: Entry, status: str) -> Rejection:
    v = entry.validation
    assert v is not None
    rules = tuple(v.failed_rules)
    folder = _bundle(workspace, entry)
    if folder:
        try:
            verdict = read_verdict(folder)
            rules = (
                tuple(
                    f"{r.get('rule')}: measured {r.get('measured')}, threshold {r.get('threshold')}"
                    for r in verdict.get("rules", [])
                    if not r.get("passed")
                )
                or rules
            )
        except FaultkitError:
            pass
    return Rejection(entry.id, status, rules or ("no failing rule recorded",))


def _bundle(workspace: Workspace, entry: Entry) -> Any:
    v = entry.validation
    if not v or not v.bundle:
        return None
    try:
        folder = safe_path(workspace.root, v.bundle, "validation.bundle")
    except FaultkitError:
        return None
    return folder if (folder / "windows").is_dir() else None


def _choose(workspace: Workspace, entries: list[Entry], fault: str | None) -> Entry | None:
    if fault:
        found = next((e for e in entries if e.id == fault), None)
        if found is None:
            raise UsageError(f"--fault {fault!r} is not an entry of the catalog")
        if not _bundle(workspace, found):
            raise UsageError(f"--fault {fault!r} has no evidence bundle with windows here; validate it first")
        return found
    return next((e for e in entries if _bundle(workspace, e)), None)
