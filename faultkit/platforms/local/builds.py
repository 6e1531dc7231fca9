"""Content-addressed builds: an immutable folder per (service, content).

A build of a service is the service's source folder with each of the app's `common` folders beside
it (the layout the Dockerfiles copy into /app). Its id is the sha256 over the sorted relative paths
and file contents, so the same tree always yields the same id and a patched tree a different one.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from faultkit.apps.sources import SKIP_DIRS, files_under, source_files
from faultkit.errors import InputError, PlatformError
from faultkit.platforms.base import Build

__all__ = ["SKIP_DIRS", "BuildStore", "digest", "source_files"]

def digest(files: list[tuple[str, Path]]) -> str:
    h = hashlib.sha256()
    for rel, path in files:
        data = path.read_bytes()
        h.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


class BuildStore:
    """Builds under `root` (state_dir/local/builds), with an index recording creation order."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def index_path(self) -> Path:
        return self.root / "index.json"

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _read_index(self) -> list[dict[str, object]]:
        try:
            return json.loads(self.index_path.read_text())
        except FileNotFoundError:
            return []

    def _write_index(self, entries: list[dict[str, object]]) -> None:
        tmp = self.index_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(entries, indent=1))
        os.replace(tmp, self.index_path)

    def build(self, service: str, source_root: Path, service_folder: str, common: tuple[str, ...]) -> Build:
        files = source_files(source_root, service_folder, common)
        hexd = digest(files)
        dest = self.root / hexd
        with self._locked():
            if not dest.is_dir():
                self._materialize(files, dest)
            entries = self._read_index()
            if not any(e["id"] == f"sha256:{hexd}" and e["service"] == service for e in entries):
                entries.append({"id": f"sha256:{hexd}", "service": service, "created": time.time()})
                self._write_index(entries)
        return Build(id=f"sha256:{hexd}", service=service, location=str(dest))

    def _materialize(self, files: list[tuple[str, Path]], dest: Path) -> None:
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
        try:
            for rel, src in files:
                target = tmp / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
                mode = 0o555 if os.access(src, os.X_OK) else 0o444
                os.chmod(target, mode)
            for dirpath, _, _ in os.walk(tmp, topdown=False):
                os.chmod(dirpath, 0o555)
            os.replace(tmp, dest)
        except BaseException:
            make_writable(tmp)
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def location(self, build_id: str) -> Path:
        hexd = build_id.removeprefix("sha256:")
        if not hexd or not all(c in "0123456789abcdef" for c in hexd):
            raise InputError(f"{build_id!r} is not a build id (expected sha256:<hex>)")
        path = self.root / hexd
        if not path.is_dir():
            raise PlatformError(f"build {build_id} is not known to the local platform; build it first")
        return path

    def contains(self, build_id: str, text: str) -> bool:
        needle = text.encode()
        for _, path in files_under(self.location(build_id), "."):
            if needle in path.read_bytes():
                return True
        return False

    def builds(self, service: str) -> list[Build]:
        entries = self._read_index()
        return [
            Build(
                id=str(e["id"]),
                service=service,
                location=str(self.root / str(e["id"]).split(":", 1)[1]),
            )
            for e in entries
            if e["service"] == service
        ]


def make_writable(folder: Path) -> None:
    """Builds are read-only; give write permission back so the folder can be deleted."""
    for dirpath, _, filenames in os.walk(folder):
        os.chmod(dirpath, stat.S_IRWXU)
        for name in filenames:
            p = Path(dirpath) / name
            if not p.is_symlink():
                os.chmod(p, stat.S_IRUSR | stat.S_IWUSR)
