"""Drafts: candidate entries kept in drafts/<app>/, outside catalog/, until a validation admits them.

A draft is a complete entry except for what only a validation can tell: the observed effect, the
log message, the evidence a diagnosis cites. Those stay `TODO: ...` placeholders. Lint checks a
draft like any entry (`faultkit catalog lint --drafts drafts/`) and reports its placeholders as
`draft` findings rather than errors; every other problem is still an error. A draft is never in a
release: `catalog build` reads catalog/ only, and only entries whose validation admitted them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import yaml

from faultkit.catalog.lint import Finding, Report, lint
from faultkit.catalog.placeholders import is_todo
from faultkit.names import check_name, confine
from faultkit.workspace import Workspace

DRAFTS = "drafts"


def drafts_dir(ws: Workspace, app: str) -> Path:
    """drafts/<app>/, refused when a symlink (drafts/ itself or the app's folder) leads outside the
    repository: the candidates written there would land wherever it points."""
    return confine(ws.root, ws.root / DRAFTS / check_name(app, "app"), "drafts folder")


def _value(data: object, path: str) -> object:
    node = data
    for part in path.replace("]", "").replace("[", ".").split("."):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def lint_drafts(ws: Workspace, paths: Iterable[Path] = ()) -> Report:
    """Lint of draft files: findings about a placeholder value become severity `draft`."""
    paths = list(paths) or [ws.root / DRAFTS]
    report = lint(ws, paths)
    cache: dict[str, object] = {}
    out: list[Finding] = []
    for f in report.findings:
        if f.file not in cache:
            path = ws.root / f.file if not Path(f.file).is_absolute() else Path(f.file)
            try:
                cache[f.file] = yaml.safe_load(path.read_text("utf-8"))
            except (OSError, yaml.YAMLError):
                cache[f.file] = None
        placeholder = f.severity == "error" and is_todo(_value(cache[f.file], f.path))
        out.append(replace(f, severity="draft") if placeholder else f)
    return replace(report, findings=tuple(out))
