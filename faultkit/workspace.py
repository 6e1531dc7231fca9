"""Where a catalog repository keeps its data, and where faultkit keeps its own state."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from faultkit.errors import UsageError


@dataclass(frozen=True)
class Workspace:
    """A catalog repository: the toolkit's data folders under one root."""

    root: Path
    state_dir: Path

    @property
    def catalog_dir(self) -> Path:
        return self.root / "catalog"

    @property
    def patches_dir(self) -> Path:
        return self.root / "patches"

    @property
    def apps_dir(self) -> Path:
        return self.root / "apps"

    @property
    def schedules_dir(self) -> Path:
        return self.root / "schedules"

    @property
    def evidence_dir(self) -> Path:
        return self.root / "evidence"

    @property
    def dist_dir(self) -> Path:
        return self.root / "dist"

    @classmethod
    def find(cls, start: Path | None = None, environ: Mapping[str, str] = os.environ) -> Workspace:
        """The workspace named by FAULTKIT_ROOT, else the nearest folder above `start` with apps/."""
        if environ.get("FAULTKIT_ROOT"):
            root = Path(environ["FAULTKIT_ROOT"]).resolve()
            if not (root / "apps").is_dir():
                raise UsageError(f"FAULTKIT_ROOT={root}: no apps/ folder there; point it at a catalog repository")
        else:
            here = (start or Path.cwd()).resolve()
            found = next((p for p in (here, *here.parents) if (p / "apps").is_dir()), None)
            if found is None:
                raise UsageError(
                    f"{here}: not inside a faultkit catalog repository (no apps/ folder above it); "
                    "run from the repository, set FAULTKIT_ROOT, or start one with `faultkit init`"
                )
            root = found
        state = Path(environ["FAULTKIT_STATE_DIR"]) if environ.get("FAULTKIT_STATE_DIR") else root / ".faultkit"
        return cls(root=root, state_dir=state.resolve())
