"""Where the catalog's admitting bundles are, and labels.json written beside their verdicts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import suggest
from faultkit.bundles import read_json
from faultkit.catalog.lint import discover, load_entry_file
from faultkit.catalog.model import Entry
from faultkit.catalog.patches import safe_path
from faultkit.errors import InputError, UsageError
from faultkit.labels.core import LABELS, app_of, label_bundle, labels_text
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write


@dataclass(frozen=True)
class Labelled:
    fault: str
    folder: Path
    labels: dict[str, Any]
    text: str
    stored: bool | None  # the stored labels.json is these bytes; None when none is stored


def admitted_entries(workspace: Workspace) -> list[Entry]:
    """Entries whose recorded verdict is an admission with a bundle folder here, by id."""
    out = []
    for path in discover(workspace):
        item, _ = load_entry_file(path, workspace)
        e = item.entry
        if e and e.validation and e.validation.verdict == "admitted" and e.validation.bundle:
            out.append(e)
    return sorted(out, key=lambda e: e.id)


def bundle_folder(workspace: Workspace, entry: Entry) -> Path:
    assert entry.validation and entry.validation.bundle
    folder = safe_path(workspace.root, entry.validation.bundle, "validation.bundle")
    if not folder.is_dir():
        raise InputError(f"{entry.id}: validation.bundle: {entry.validation.bundle} is not here; restore it or "
                         "validate again")
    return folder


def label_fault(workspace: Workspace, entry: Entry) -> Labelled:
    folder = bundle_folder(workspace, entry)
    labels = label_bundle(folder, app_of(workspace, folder))
    text = labels_text(labels)
    stored = folder / LABELS
    return Labelled(entry.id, folder, labels, text, stored.read_text("utf-8") == text if stored.is_file() else None)


def select(workspace: Workspace, fault: str | None, every: bool) -> list[Entry]:
    if bool(fault) == every:
        raise UsageError("name one FAULT or pass --all")
    entries = admitted_entries(workspace)
    if every:
        return entries
    found = [e for e in entries if e.id == fault]
    if not found:
        ids = [e.id for e in entries]
        raise UsageError(f"{fault!r} is not an admitted fault with a bundle here{suggest(fault or '', ids)}; "
                         "validate it first")
    return found


def write_labels(item: Labelled) -> Path:
    path = item.folder / LABELS
    atomic_write(path, item.text)
    return path


def stored_labels(folder: Path) -> dict[str, Any] | None:
    """The labels.json stored beside a verdict, as data; None when there is none."""
    return read_json(folder, LABELS) if (folder / LABELS).is_file() else None
