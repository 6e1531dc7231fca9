"""A service's build context: its files with the app's shared code beside them, as a tar stream.

The layout is the local platform's build layout (faultkit/platforms/local/builds.py): the service
folder's files at the top, each `common` folder (minishop: shoplib/) beside them. The tar is made
here, not by the SDK, so it is the same bytes for the same files: sorted, owned by root, every time
stamp set to SOURCE_DATE_EPOCH. Files the image copies then land in layers without this machine's
clock in them, and the digest of the tar names what the image was built from.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from faultkit.apps.descriptor import AppDescriptor
from faultkit.errors import InputError
from faultkit.process import run

DEFAULT_EPOCH = 315532800  # 1980-01-01: the earliest time every archive format can hold


def epoch() -> int:
    value = os.environ.get("SOURCE_DATE_EPOCH", "")
    if not value:
        return DEFAULT_EPOCH
    if not value.isdigit():
        raise InputError(f"SOURCE_DATE_EPOCH={value!r}: not a number of seconds; unset it or give an integer")
    return int(value)


@contextmanager
def source_tree(app: AppDescriptor, source_root: Path, patch: Path | None) -> Iterator[Path]:
    """`source_root`, or with `patch` a patched copy of it (`git apply` on a copy, as validation
    applies a code fault's patch; patch paths are relative to the app folder)."""
    if patch is None:
        yield source_root
        return
    if app.source_dir is None:
        raise InputError(f"{app.name}: the descriptor names no source folder; a patch has nothing to apply to")
    tmp = Path(tempfile.mkdtemp(prefix="src-"))
    try:
        src = tmp / app.source_dir.relative_to(app.root)
        shutil.copytree(source_root, src, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
        result = run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=tmp)
        if not result.ok:
            raise InputError(f"{patch}: does not apply to {app.name}'s source: {result.tail(3)}; rebase the patch")
        yield src
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def context_tar(files: list[tuple[str, Path]], extra: dict[str, bytes] | None = None,
                links: dict[str, str] | None = None) -> bytes:
    """An uncompressed tar of (path in the context, file) plus `extra` in-memory files and `links`
    (path in the context: symbolic link target), reproducible."""
    stamp = epoch()
    entries: dict[str, tuple[bytes, int]] = {}
    for rel, path in files:
        entries[rel] = (path.read_bytes(), 0o755 if os.access(path, os.X_OK) else 0o644)
    for rel, data in (extra or {}).items():
        entries[rel] = (data, 0o644)
    links = links or {}
    dirs = sorted({p.as_posix() for rel in [*entries, *links] for p in Path(rel).parents if p.as_posix() != "."})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for d in dirs:
            tar.addfile(_info(d, tarfile.DIRTYPE, 0o755, 0, stamp))
        for rel in sorted(entries):
            data, mode = entries[rel]
            tar.addfile(_info(rel, tarfile.REGTYPE, mode, len(data), stamp), io.BytesIO(data))
        for rel in sorted(links):
            info = _info(rel, tarfile.SYMTYPE, 0o777, 0, stamp)
            info.linkname = links[rel]
            tar.addfile(info)
    return buf.getvalue()


def _info(name: str, kind: bytes, mode: int, size: int, stamp: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.size, info.mtime = kind, mode, size, stamp
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
