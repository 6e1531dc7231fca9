"""The shipped catalog's evidence, found the way `catalog build` finds it: each entry names its bundle
(validation.bundle, and validation.stability.bundle for the second verdict). Bundles live where the
run that made them put them (evidence/<fault>/<run>/ for a single validation, a campaign folder's
bundles/<fault>/<run>/ for a campaign), so tests never assume one layout."""

from __future__ import annotations

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
