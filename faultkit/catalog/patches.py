"""Code-fault patches: resolve their path safely and read what they touch and add."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

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


# git's extended header lines; a hunk's lines start with ' ', '+', '-' or '\', so none is mistaken for one
_HEADER = re.compile(r"(old mode|new mode|deleted file mode|new file mode|rename from|rename to|copy from|copy to"
                     r"|similarity index|dissimilarity index|index|GIT binary patch|Binary files)\b ?(.*)")
_GIT_DIFF = re.compile(r"diff --git (\S+) (\S+)")
_EXECUTABLE = re.compile(r"1007[0-7][0-7]")
_SYMLINK = "120000"
_SUBMODULE = "160000"


def patch_problems(text: str, source: str) -> list[str]:
    """Why a code fault's patch is refused: it may only modify or add regular, non-executable files
    under the target service's source folder `source` (relative to the app folder, like the diff).

    `git apply` carries out renames, copies, deletions, mode changes, symlinks and binary blobs, and
    each of those would let a patch reach past its service: move another service's file in, plant a
    link out of the repository, make a file executable, or hide content from review.
    """
    found: list[str] = []
    for line in text.splitlines():
        git = _GIT_DIFF.fullmatch(line)
        if git:
            for name in git.groups():
                path = _strip(name)
                if not _inside(path, source):
                    found.append(f"names {path}, outside {source}/; a patch changes only the target's source")
            continue
        m = _HEADER.match(line)
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if key in ("rename from", "rename to"):
            found.append(f"renames a file ({key} {value}); a patch may only modify or add files")
        elif key in ("copy from", "copy to"):
            found.append(f"copies a file ({key} {value}); a patch may only modify or add files")
        elif key in ("GIT binary patch", "Binary files"):
            found.append("holds a binary change; a patch may only change text files")
        elif key in ("new mode", "new file mode", "old mode", "deleted file mode", "index"):
            mode = value.split()[-1] if value else ""
            if mode == _SUBMODULE:
                found.append(f"adds or changes a submodule ({key} {mode}); a patch may only change regular files")
            elif mode == _SYMLINK:
                found.append(f"makes or changes a symlink ({key} {mode}); a patch may only change regular files")
            elif key in ("new mode", "new file mode") and _EXECUTABLE.fullmatch(mode):
                found.append(f"makes a file executable ({key} {mode}); a patch may not change file modes")
            elif key == "new mode":
                found.append(f"changes a file mode ({key} {mode}); a patch may not change file modes")
    found += _file_problems(text)
    return list(dict.fromkeys(found))


def _file_problems(text: str) -> list[str]:
    """What the files of a parsed patch do that no patch may: delete a file (a test, say, so the
    service's checks stop catching the fault) or write into git's own folder (hooks run on the
    validator's machine)."""
    try:
        patch = PatchSet(text)
    except UnidiffParseError:
        return []  # read_patch reports the parse error
    found = []
    for f in patch:
        if f.is_removed_file or f.target_file == "/dev/null":
            found.append(f"deletes {_strip(f.source_file)}; a patch may only modify or add files")
        for name in {_strip(f.source_file), _strip(f.target_file)} - {"/dev/null"}:
            if any(part.lower() == ".git" for part in PurePosixPath(name).parts):
                found.append(f"writes under .git ({name}); a patch may only change the service's source files")
    return found


def _inside(path: str, source: str) -> bool:
    parts = PurePosixPath(path).parts
    return path == "/dev/null" or (path.startswith(source + "/") and ".." not in parts and not path.startswith("/"))


def patch_file_problems(path: Path, source: str) -> list[str]:
    """patch_problems of the patch file at `path` (lint's entry point)."""
    return patch_problems(read_text(path), source)
