"""Where an application's upstream files come from, and whether a user's copy is that version.

A descriptor derived from published manifests records the repository, the version (release tag,
chart version or commit), the folder in the repository, and the sha256 of every file it was derived
from; the files themselves stay upstream. `verify` compares a user's copy with those digests.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor
from faultkit.errors import InputError


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def record(files: list[Path], repository: str, version: str, path: str = "", commit: str | None = None,
           ) -> dict[str, Any]:
    """The descriptor's `upstream` block for these files, each named by its file name."""
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise InputError(f"{', '.join(names)}: two upstream files share a name; import them from one folder")
    out: dict[str, Any] = {"repository": repository, "version": version}
    if commit:
        out["commit"] = commit
    if path:
        out["path"] = path
    out["files"] = [{"path": f.name, "sha256": sha256_of(f)} for f in files]
    return out


@dataclass(frozen=True)
class FileCheck:
    path: str
    status: str  # "ok", "missing" or "different"
    want: str
    got: str | None


@dataclass(frozen=True)
class Verified:
    app: str
    repository: str
    version: str
    folder: Path
    files: tuple[FileCheck, ...]

    @property
    def ok(self) -> bool:
        return all(f.status == "ok" for f in self.files)


def verify(app: AppDescriptor, folder: Path) -> Verified:
    """Check every upstream file of `app` under `folder` (by its recorded name) against its digest."""
    if app.upstream is None:
        raise InputError(f"{app.name}: the descriptor records no upstream files (no `upstream:` block); "
                         "nothing to verify against")
    if not folder.is_dir():
        raise InputError(f"{folder}: --manifests is not a folder; give the folder holding your copy of "
                         f"{app.upstream.repository} {app.upstream.path or ''} at {app.upstream.version}")
    checks = []
    for f in app.upstream.files:
        path = folder / f.path
        got = sha256_of(path) if path.is_file() else None
        status = "missing" if got is None else ("ok" if got == f.sha256 else "different")
        checks.append(FileCheck(f.path, status, f.sha256, got))
    return Verified(app.name, app.upstream.repository, app.upstream.version, folder, tuple(checks))
