"""The files of a service's build: its source folder and the app's common folders, in a stable order.

Both the local platform's folder builds and the image builds read a service's source through this,
so the two make their builds from the same files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from faultkit.errors import InputError

SKIP_DIRS = frozenset({"__pycache__", ".ruff_cache", ".pytest_cache", ".mypy_cache", ".git"})


def files_under(folder: Path, prefix: str) -> Iterator[tuple[str, Path]]:
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel_dir = Path(dirpath).relative_to(folder)
        for name in sorted(filenames):
            if name.endswith(".pyc"):
                continue
            path = Path(dirpath) / name
            if path.is_symlink():
                # a symlink could point anywhere on this machine: a build holds only real files
                raise InputError(f"{path}: symbolic links are not allowed in a build source tree")
            yield (Path(prefix) / rel_dir / name).as_posix(), path


def source_files(source_root: Path, service_folder: str, common: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(relative path in the build, source file) for the service folder and the common folders."""
    base = source_root / service_folder
    if not base.is_dir():
        raise InputError(f"{base}: service source folder not found")
    out = list(files_under(base, "."))
    for folder in common:
        if not (source_root / folder).is_dir():
            raise InputError(f"{source_root / folder}: common source folder not found")
        out.extend(files_under(source_root / folder, folder))
    return sorted((rel.removeprefix("./"), p) for rel, p in out)
