"""The catalog's invariants for changed entries, with the unchanged catalog taken as given.

lint(workspace, paths) checks unique ids and duplicate changes against the rest of the catalog,
but it lists the given files first, so when a new entry repeats an existing one the existing
entry is the one blamed, and dropped from the report because it was not asked about. A gate
must blame the change: here the unchanged entries come first. The gate lints the whole catalog
once (which costs no more than linting a few files against the rest: loading dominates), keeps
the findings on changed files, and adds these; identical findings are merged by the caller.
"""

from __future__ import annotations

from collections.abc import Iterable

from faultkit.catalog.lint import CATALOG_RULES, Context, Finding, Loaded, load_entry_file
from faultkit.catalog.model import Entry
from faultkit.workspace import Workspace


def cross_check(workspace: Workspace, changed: Iterable[str], others: Iterable[Entry]) -> list[Finding]:
    """Findings of the catalog rules on the `changed` files (workspace-relative).

    `others` are the catalog's entries as lint already loaded them (so the catalog is read once);
    an entry lives at catalog/<app>/<id>.yaml (lint's location rule says so).
    """
    mine = {f: load_entry_file(workspace.root / f, workspace)[0] for f in changed}
    rest = [Loaded(f"catalog/{e.app}/{e.id}.yaml", None, e) for e in others]
    rest = [item for item in rest if item.file not in mine]
    items = [*rest, *(item for item in mine.values() if item.entry)]
    ctx = Context(workspace)
    out = []
    for rule in CATALOG_RULES:
        for item, path, message in rule(ctx, items):
            if item.file in mine:
                out.append(
                    Finding(item.file, _line(item, path), path, message, "error", rule.__name__.removeprefix("check_"))
                )
    return out


def _line(item: Loaded, path: str) -> int:
    pointer = tuple(int(p) if p.isdigit() else p for p in path.replace("[", ".").replace("]", "").split("."))
    return item.located.line(pointer) if item.located else 1
