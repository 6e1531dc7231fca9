"""Where a schedule's candidates come from: a published catalog release, or the working tree."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit import jsonio
from faultkit.catalog.model import entry_from_data
from faultkit.errors import InputError
from faultkit.schedules.generator import Injectable
from faultkit.workspace import Workspace
from faultkit.yamlio import MAX_BYTES, canonical_json

RELEASE_SCHEMA = "faultkit/release/v1"
WORKING_TREE = "working-tree"
_RELEASE_NAME = re.compile(r"^catalog-(.+)\.json$")


@dataclass(frozen=True)
class Source:
    """A catalog to draw from: its version and digest, and its entries as plain data."""

    version: str
    digest: str
    entries: tuple[dict[str, Any], ...]
    where: str  # how to name it in messages (a file name, or the catalog folder)

    @property
    def apps(self) -> list[str]:
        return sorted({str(e.get("app")) for e in self.entries})

    def candidates(self, app: str) -> list[Injectable]:
        """The app's entries as candidates; InputError when the app has none here."""
        if not self.entries:
            raise InputError(f"{self.where}: the catalog holds no entries; "
                             "admit some faults before exporting a schedule")
        rows = [e for e in self.entries if e.get("app") == app]
        if not rows:
            raise InputError(f"{self.where}: no entries for app {app!r}; "
                             f"apps here: {', '.join(self.apps)}")
        out = []
        for data in rows:
            try:
                entry = entry_from_data(data)
            except (KeyError, TypeError, AttributeError, ValueError) as e:
                raise InputError(f"{self.where}: entry {data.get('id', '?')!r} is malformed "
                                 f"({type(e).__name__}: {e}); rebuild the release") from None
            out.append(Injectable(entry.id, entry.category, entry.artifact_key))
        return out


def newest_release(ws: Workspace) -> Path:
    """The dist/catalog-<version>.json with the highest version (numeric parts compared as
    numbers, so 1.10 is newer than 1.9)."""
    found = [(m.group(1), p) for p in ws.dist_dir.glob("catalog-*.json") if (m := _RELEASE_NAME.match(p.name))]
    if not found:
        raise InputError("no catalog release in dist/; run `faultkit catalog build` first, "
                         "or pass --release")
    return max(found, key=lambda found_file: _version_key(found_file[0]))[1]


def load_release(path: Path) -> Source:
    """A release file as a Source; InputError names the file and what is wrong with it."""
    try:
        data = jsonio.load(path, max_bytes=64 * MAX_BYTES)
    except InputError as e:
        raise InputError(f"{e}; pass a file written by `faultkit catalog build`") from None
    if not isinstance(data, dict) or data.get("schema") != RELEASE_SCHEMA:
        raise InputError(f"{path.name}: not a catalog release (expected schema "
                         f"{RELEASE_SCHEMA!r}); pass a file written by `faultkit catalog build`")
    for key, kind in (("version", str), ("digest", str), ("entries", list)):
        if not isinstance(data.get(key), kind):
            raise InputError(f"{path.name}: {key} is missing or not a {kind.__name__}; "
                             "rebuild the release")
    if not all(isinstance(e, dict) for e in data["entries"]):
        raise InputError(f"{path.name}: entries must be objects; rebuild the release")
    return Source(data["version"], data["digest"], tuple(data["entries"]), path.name)


def working_tree(ws: Workspace, app: str) -> Source:
    """The schema-valid entries under catalog/<app>/, before any release exists.

    Named "working-tree"; its digest is SHA-256 over the canonical JSON of those entries sorted
    by id, so two exports from the same files name the same digest.
    """
    from faultkit.catalog.lint import discover, load_entry_file  # lint pulls in the app model

    folder = ws.catalog_dir / app
    if not folder.is_dir():
        known = sorted(p.name for p in ws.catalog_dir.iterdir() if p.is_dir()) \
            if ws.catalog_dir.is_dir() else []
        raise InputError(f"catalog/{app}/: no such folder, so no entries for app {app!r}; "
                         f"apps here: {', '.join(known) or 'none'}")
    entries = []
    for path in discover(ws, [folder]):
        item, _ = load_entry_file(path, ws)
        if item.entry is not None and item.located is not None:  # a valid entry always has its document
            entries.append(dict(item.located.data))
    entries.sort(key=lambda e: e["id"])
    digest = "sha256:" + hashlib.sha256(canonical_json(entries).encode()).hexdigest()
    return Source(WORKING_TREE, digest, tuple(entries), f"catalog/{app}/")


def _version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.findall(r"\d+|[^\d.+_-]+", version))
