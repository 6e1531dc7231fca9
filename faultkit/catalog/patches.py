"""Code-fault patches: resolve their path safely and read what they touch and add."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from faultkit.errors import InputError
from faultkit.names import safe_path  # noqa: F401 - re-exported: the catalog's callers import it here
from faultkit.yamlio import read_text


@dataclass(frozen=True)
class PatchInfo:
    files: tuple[str, ...]  # paths relative to the app folder, as the diff names them
    added: tuple[str, ...]  # every added line, without the leading '+'
    digest: str


def read_patch(path: Path) -> PatchInfo:
    text = read_text(path)
    try:
        patch = PatchSet(text)
    except UnidiffParseError as e:
        raise InputError(f"{path}: not a unified diff ({e})") from None
    if not len(patch):
        raise InputError(f"{path}: the patch changes no file")
    files = tuple(_strip(f.target_file if f.target_file != "/dev/null" else f.source_file) for f in patch)
    added = tuple(str(line.value).rstrip("\n") for f in patch for h in f for line in h if line.is_added)
    return PatchInfo(files, added, "sha256:" + hashlib.sha256(text.encode()).hexdigest())


def _strip(name: str) -> str:
    return name[2:] if name.startswith(("a/", "b/")) else name
