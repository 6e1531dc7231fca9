"""The shipped catalog's evidence, found the way `catalog build` finds it: each entry names its bundle
(validation.bundle, and validation.stability.bundle for the second verdict). Bundles live where the
run that made them put them (evidence/<fault>/<run>/ for a single validation, a campaign folder's
bundles/<fault>/<run>/ for a campaign), so tests never assume one layout."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent.parent
CATALOG = REPO / "catalog" / "minishop"


def bundle_of(fault: str) -> Path:
    """The folder of the bundle the entry's verdict rests on."""
    entry: dict[str, Any] = yaml.safe_load((CATALOG / f"{fault}.yaml").read_text("utf-8"))
    return REPO / entry["validation"]["bundle"]


def all_bundles() -> list[Path]:
    """Every sealed bundle under evidence/ that holds a verdict, in path order."""
    return sorted(p.parent for p in (REPO / "evidence").rglob("verdict.json") if (p.parent / "MANIFEST.json").is_file())


def older_signed_bundles() -> list[Path]:
    """The shipped bundles signed in the format before DSSE attestations (a bare ed25519 signature
    over MANIFEST.json: minishop's catalog); bundles signed since carry an attestation."""
    return [b for b in all_bundles() if "algorithm" in json.loads((b / "SIGNATURE.json").read_text("utf-8"))]


def minishop_copy(root: Path, edit: Callable[[dict[str, Any]], None] | None = None, skip: tuple[str, ...] = ()) -> Path:
    """The shipped minishop copied to root/apps/minishop (tool caches and `skip` left out), its app.yaml
    changed by `edit` when given; returns the copy's app.yaml."""
    shutil.copytree(REPO / "apps" / "minishop", root / "apps" / "minishop",
                    ignore=shutil.ignore_patterns("__pycache__", ".*_cache", *skip))
    app_yaml = root / "apps" / "minishop" / "app.yaml"
    if edit is not None:
        data = yaml.safe_load(app_yaml.read_text())
        edit(data)
        app_yaml.write_text(yaml.safe_dump(data, sort_keys=False))
    return app_yaml
