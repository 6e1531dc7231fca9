"""YAML at the edge: load a file into plain data plus the line of every value, write atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from faultkit.errors import InputError

# A catalog entry is a few kilobytes; anything this large is a mistake, not an entry.
MAX_BYTES = 1024 * 1024

Pointer = tuple[str | int, ...]

# libyaml's parser where it is installed: lint reads a thousand entries in well under a second.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _DupLoader(_FAST_LOADER):  # type: ignore[misc,valid-type]
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

    def _compose(self) -> None:
        node = yaml.compose(self._text or "", Loader=_FAST_LOADER)
        lines: dict[Pointer, int] = {(): 1}
        dups: list[tuple[Pointer, int]] = []
        if node is not None:
            _construct(yaml.SafeLoader(""), node, (), lines, dups)
        self._lines, self._dups = lines, tuple(dups)

    @property
    def lines(self) -> dict[Pointer, int]:
        if self._lines is None:
            self._compose()
        return self._lines  # type: ignore[return-value]

    @property
    def duplicate_keys(self) -> tuple[tuple[Pointer, int], ...]:
        if self._dups is None:
            self._compose()
        return self._dups  # type: ignore[return-value]

    def line(self, path: Pointer) -> int:
        """The line of `path`, or of its nearest ancestor that exists."""
        lines = self.lines
        while path not in lines and path:
            path = path[:-1]
        return lines.get(path, 1)


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """The file's text, or an InputError naming what is wrong with it."""
    if path.is_dir():
        raise InputError(f"{path}: is a folder, expected a file")
    if not path.exists():
        raise InputError(f"{path}: no such file")
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(f"{path}: {size} bytes is too large (limit {max_bytes}); is this the right file?")
    raw = path.read_bytes()
    if b"\0" in raw:
        raise InputError(f"{path}: is a binary file, expected UTF-8 text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: byte {e.start} is not UTF-8; save the file as UTF-8") from None


def load_located(path: Path, max_bytes: int = MAX_BYTES) -> Located:
    """Parse one YAML document; errors name the file and line."""
    text = read_text(path, max_bytes)
    loader = _DupLoader(text)
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"{where}: malformed YAML: {problem}") from None
    finally:
        loader.dispose()
    return Located(data, text, bool(loader.duplicates))


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
    """Write to a temporary file beside `path`, then rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
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
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def canonical_json(data: Any) -> str:
    """The one JSON spelling faultkit digests and compares: sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
