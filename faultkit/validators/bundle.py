"""Evidence bundles: one folder per validation run, sealed by a manifest of sha256 digests.

The verdict is computed from the bundle alone (judge.py), so a bundle must hold every input the
rules read, and any change to it after sealing must be detected.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from faultkit.errors import InputError
from faultkit.yamlio import atomic_write

MANIFEST = "MANIFEST.json"
# derived from the sealed files and recomputed by judge, so kept outside the seal: adding one to a
# shipped bundle must not change the digest its entry records
LABELS = "labels.json"
DERIVED = (LABELS,)


def dumps(data: Any) -> str:
    """The one JSON spelling bundles use, so re-serialising a verdict gives the same bytes."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def sha256_file(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


class BundleWriter:
    """Writes a bundle's files as the run goes (an interrupted run keeps what it had), then seals."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / ".writable"
            probe.write_text("")
            probe.unlink()
        except OSError as e:
            raise InputError(f"{folder}: evidence folder is not writable ({e.strerror}); pass --evidence DIR") from None

    def write(self, name: str, data: Any) -> Path:
        path = self.folder / name
        atomic_write(path, dumps(data))
        return path

    def write_text(self, name: str, text: str) -> Path:
        path = self.folder / name
        atomic_write(path, text)
        return path

    def seal(self) -> str:
        files = {
            p.relative_to(self.folder).as_posix(): sha256_file(p)
            for p in sorted(self.folder.rglob("*"))
            if p.is_file() and p.name != MANIFEST and p.relative_to(self.folder).as_posix() not in DERIVED
        }
        atomic_write(self.folder / MANIFEST, dumps({"files": files}))
        return sha256_file(self.folder / MANIFEST)


def verify_bundle(folder: Path) -> str:
    """The bundle's digest, after checking every file against the manifest; tampering raises."""
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise InputError(f"{folder}: not a sealed evidence bundle (no {MANIFEST}); was the run interrupted?")
    try:
        listed: dict[str, str] = json.loads(manifest_path.read_text("utf-8"))["files"]
    except (ValueError, KeyError, TypeError):
        raise InputError(f"{manifest_path}: bundle tampered: the manifest is not valid") from None
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST}
    present -= set(DERIVED)
    for name in sorted(set(listed) | present):
        if name not in listed:
            raise InputError(f"{folder}: bundle tampered: {name} is not in the manifest")
        path = folder / name
        if not path.is_file():
            raise InputError(f"{folder}: bundle tampered: {name} is missing")
        if sha256_file(path) != listed[name]:
            raise InputError(f"{folder}: bundle tampered: {name} digest mismatch")
    return sha256_file(manifest_path)


def read_json(folder: Path, name: str) -> Any:
    try:
        return json.loads((folder / name).read_text("utf-8"))
    except FileNotFoundError:
        raise InputError(f"{folder}: bundle has no {name}") from None
    except ValueError as e:
        raise InputError(f"{folder / name}: not valid JSON ({e})") from None


def read_verdict(folder: Path) -> dict[str, Any]:
    return read_json(folder, "verdict.json")
