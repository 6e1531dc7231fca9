"""Placeholders: explicit `TODO: ...` values that lint rejects until an author fills them in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from faultkit.catalog.vocab import EFFECTS

TODO = "TODO"
EFFECT_TODO = f"TODO: one of {', '.join(EFFECTS)}"


def todo(what: str) -> str:
    return f"{TODO}: {what}"


def is_todo(value: object) -> bool:
    return isinstance(value, str) and value.lstrip().startswith(TODO)


def todo_paths(data: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(field path such as `code.update` or `evidence.logs[0]`, value) of every placeholder."""
    if isinstance(data, dict):
        for k, v in data.items():
            yield from todo_paths(v, f"{path}.{k}" if path else str(k))
    elif isinstance(data, list | tuple):
        for i, v in enumerate(data):
            yield from todo_paths(v, f"{path}[{i}]")
    elif is_todo(data):
        yield path or "(document)", data
