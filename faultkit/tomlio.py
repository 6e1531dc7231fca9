"""faultkit.toml at the edge: read with the same limits as every other hostile file.

The file comes with the repository, so a pull request can make it anything: a FIFO (an open would
block forever), a device, 100,000 nested brackets (tomllib recurses once per bracket), or tables
where faultkit expects values. Every reader of faultkit.toml goes through `load_toml` and `table`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from faultkit.errors import InputError
from faultkit.safeio import read_bytes

MAX_BYTES = 256 * 1024


def load_toml(path: Path, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """The document at `path` ({} when there is none), or an InputError naming the file and what is wrong."""
    if not path.exists() and not path.is_symlink():
        return {}
    raw = read_bytes(path, max_bytes)  # regular files only, stat'ed before opening
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: byte {e.start} is not UTF-8; save the file as UTF-8") from None
    return parse_toml(text, str(path))


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """A TOML document read from elsewhere (a file as committed at a revision), with the same refusals."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{where}: not valid TOML ({e})") from None
    except RecursionError:
        raise InputError(f"{where}: nesting too deep to be a configuration file; flatten it") from None


def table(document: dict[str, Any], name: str, path: Path | str) -> dict[str, Any]:
    """The table `[name]` of a document ({} when absent); anything else (`[[name]]`, a value) is refused."""
    value = document.get(name, {})
    if not isinstance(value, dict):
        kind = "an array of tables ([[" + name + "]])" if isinstance(value, list) else type(value).__name__
        raise InputError(f"{path}: [{name}] must be a table, found {kind}")
    return value
