"""Which files lint reads, and the name each goes by in findings."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from faultkit.workspace import Workspace


def discover(workspace: Workspace, paths: Iterable[Path] = ()) -> list[Path]:
    """The entry files named by `paths` (files or folders), or every file under catalog/."""
    paths = list(paths) or [workspace.catalog_dir]
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            # a folder named like an entry is reported by the loader, not silently skipped
            out.extend(sorted((q for q in p.rglob("*") if q.suffix in (".yaml", ".yml")), key=lambda q: q.parts))
        else:
            out.append(p)  # a missing or odd file is reported by the loader, with its name
    return out


def display(path: Path, workspace: Workspace) -> str:
    """A file's name in findings: relative to the workspace root when inside it."""
    text, root = str(path), f"{workspace.root}/"
    if text.startswith(root) and "/../" not in text and "/./" not in text:
        return text[len(root):]  # what discover() yields: string work, not a resolve() per file
    try:
        return path.resolve().relative_to(workspace.root).as_posix()
    except ValueError:
        return str(path)
