"""Write a validation's verdict into its catalog entry, leaving the rest of the file as it was.

The entry's `validation:` block is replaced as text (YAML comments and layout elsewhere in the
file survive), through an atomic write. The validator calls this; it lives with the catalog
because it edits catalog files, and the catalog never imports the validator.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from faultkit.catalog.model import Entry
from faultkit.catalog.patches import read_patch, safe_path
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write, dump_yaml


def validation_block(
    workspace: Workspace,
    entry: Entry,
    folder: Path,
    digest: str,
    *,
    status: str,
    failed_rules: Sequence[str],
    platform: str,
    window_s: float,
    repeat: int,
) -> dict[str, Any]:
    """The `validation:` record of a sealed bundle: where it is, its digest, what it judged."""
    resolved = folder.resolve()
    record: dict[str, Any] = {
        "verdict": status,
        "bundle": resolved.relative_to(workspace.root).as_posix()
        if resolved.is_relative_to(workspace.root)
        else str(folder),
        "bundle_digest": digest,
        "entry_digest": entry.digest(),
        "at": datetime.fromtimestamp(folder.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "platform": platform,
        "window_s": window_s,
        "repeat": repeat,
    }
    if entry.code:
        record["patch_digest"] = read_patch(safe_path(workspace.root, entry.code.patch, "patch")).digest
    if failed_rules:
        record["failed_rules"] = list(failed_rules)
    return record


def replace_validation(text: str, record: dict[str, Any]) -> str:
    """The entry file's text with its top-level `validation:` block replaced by `record`, at the end."""
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if line.startswith("validation:"):
            skipping = True
            continue
        if skipping and (line.startswith((" ", "\t")) or not line.strip()):
            continue
        skipping = False
        kept.append(line)
    return "".join(kept).rstrip("\n") + "\n" + dump_yaml({"validation": record})


def record_validation(workspace: Workspace, entry: Entry, record: dict[str, Any]) -> Path:
    """Write `record` (see validation_block) into the entry's file; returns the file."""
    path = workspace.catalog_dir / entry.app / f"{entry.id}.yaml"
    atomic_write(path, replace_validation(path.read_text("utf-8"), record))
    return path
