"""YAML at the edge: load a file into plain data plus the line of every value, write atomically."""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import yaml

from faultkit.errors import InputError
from faultkit.safeio import read_bytes
from faultkit.yamlevents import (
    FAST_LOADER,
    MAX_DEPTH,
    MAX_INT,
    MAX_NODES,
    Pointer,
    check_events,
    check_plain,
    walk,
    yaml_error,
)

# A catalog entry is a few kilobytes; anything this large is a mistake, not an entry.
MAX_BYTES = 1024 * 1024


__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_INT", "MAX_NODES", "Located", "Pointer", "atomic_write", "canonical_json",
           "check_events", "check_plain", "decode", "dump_yaml", "load_located", "load_text", "load_yaml", "read_text"]


class _DupLoader(FAST_LOADER):
    """Notes keys spelt twice in one mapping (PyYAML silently keeps the later one)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[str, int]] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key in seen:
                self.duplicates.append((str(key), key_node.start_mark.line + 1))
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class Located:
    """A loaded document; the 1-based line of each value is worked out only when a finding needs it."""

    def __init__(self, data: Any, text: str | None = None, has_duplicates: bool = False) -> None:
        self.data = data
        self._text = text
        self._lines: dict[Pointer, int] | None = None
        self._dups: tuple[tuple[Pointer, int], ...] | None = None if has_duplicates else ()

    def _compose(self) -> tuple[dict[Pointer, int], tuple[tuple[Pointer, int], ...]]:
        node = yaml.compose(self._text or "", Loader=FAST_LOADER)
        lines: dict[Pointer, int] = {(): 1}
        dups: list[tuple[Pointer, int]] = []
        if node is not None:
            _construct(yaml.SafeLoader(""), node, (), lines, dups)
        return lines, tuple(dups)

    @property
    def lines(self) -> dict[Pointer, int]:
        if self._lines is None:
            self._lines, self._dups = self._compose()
        return self._lines

    @property
    def duplicate_keys(self) -> tuple[tuple[Pointer, int], ...]:
        if self._dups is None:
            self._lines, self._dups = self._compose()
        return self._dups

    def line(self, path: Pointer) -> int:
        """The line of `path`, or of its nearest ancestor that exists."""
        lines = self.lines
        while path not in lines and path:
            path = path[:-1]
        return lines.get(path, 1)


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """The file's text (read_bytes, then UTF-8 without NUL), or an InputError naming what is wrong."""
    return decode(read_bytes(path, max_bytes), path)


def decode(raw: bytes, path: Path) -> str:
    """Bytes read from `path` as UTF-8 text without NUL, or an InputError naming what is wrong."""
    if b"\0" in raw:
        raise InputError(f"{path}: is a binary file, expected UTF-8 text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: byte {e.start} is not UTF-8; save the file as UTF-8") from None


def load_located(path: Path, max_bytes: int = MAX_BYTES) -> Located:
    """Parse one YAML document; errors name the file and line."""
    return load_text(read_text(path, max_bytes), path)


def load_text(text: str, path: Path) -> Located:
    """load_located of text already read from `path` (lint reads each entry once, for its digest too)."""
    docs = walk(text, str(path))  # the limits first; the plain values in the same pass
    if docs is not None and len(docs) <= 1:
        located = Located(docs[0].data, text, docs[0].duplicates) if docs else Located(None, text)
        if docs and not docs[0].plain:  # built from plain scalars: only a key or a number can be refused
            check_plain(located.data, str(path), located.line)
        return located
    loader = _DupLoader(text)  # a value beyond plain data, or two documents: PyYAML builds it or says why not
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as e:
        raise yaml_error(e, str(path)) from None
    except (ValueError, OverflowError) as e:  # a value PyYAML's constructors cannot build
        raise InputError(f"{path}: a value cannot be read ({e}); write plain strings and numbers") from None
    finally:
        loader.dispose()
    located = Located(data, text, bool(loader.duplicates))
    check_plain(located.data, str(path), located.line)
    return located


def _construct(loader: yaml.SafeLoader, node: yaml.Node, path: Pointer, lines: dict, dups: list) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node)
            key = key if isinstance(key, str) else str(key)
            if key in out:
                dups.append(((*path, key), key_node.start_mark.line + 1))
            out[key] = _construct(loader, value_node, (*path, key), lines, dups)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(loader, v, (*path, i), lines, dups) for i, v in enumerate(node.value)]
    return loader.construct_object(node)


def load_yaml(path: Path, max_bytes: int = MAX_BYTES) -> Any:
    return load_located(path, max_bytes).data


def atomic_write(path: Path, text: str | bytes) -> None:
    """Write to a temporary file beside `path`, then rename: readers never see half a file.

    An existing `path` must be a regular file: renaming over a device such as /dev/full or a FIFO
    would replace the node with a file and report success. A failed write (a full disk, a file size
    limit) is an InputError, and the temporary file is removed.
    """
    _writable_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(f"{path.parent}: is not a folder (a file or a symlink loop); name a folder to write in"
                         ) from None
    except OSError as e:
        raise InputError(f"{path.parent}: cannot make this folder ({e.strerror})") from None
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise InputError(f"{path.parent}: cannot write here ({e.strerror}); choose a writable folder") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"{path}: not written ({e.strerror or e}); nothing was changed") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _writable_target(path: Path) -> None:
    """Refuse a `path` that exists and is not a regular file (followed through symlinks)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise InputError(f"{path}: is a symlink loop; name a regular file") from None
        if e.errno == errno.ENOTDIR:
            raise InputError(f"{path.parent}: is not a folder; name a file in a folder") from None
        raise InputError(f"{path}: cannot check it ({e.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path}: is a folder; name a file to write")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path}: exists and is not a regular file (a device, FIFO or socket); name a regular file")


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def canonical_json(data: Any) -> str:
    """The one JSON spelling faultkit digests and compares: sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
