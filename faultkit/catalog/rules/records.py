"""The records lint passes around: findings, loaded files and the per-file facts of the index.

Kept free of YAML, the schema validator and the app model, so a run answered from the cache
imports none of them (issue 20).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from faultkit.catalog.model import Entry
    from faultkit.yamlio import Located


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    path: str
    message: str
    severity: str = "error"
    rule: str = "schema"

    def render(self) -> str:
        return f"{self.file}:{self.line}: {self.path}: {self.message}"


@dataclass(frozen=True)
class Loaded:
    """One catalog file as lint sees it."""

    file: str  # relative to the workspace root when inside it
    located: Located | None
    entry: Entry | None


@dataclass(frozen=True)
class Facts:
    """What the whole-catalog rules need of one valid entry; cached beside the file's findings."""

    file: str
    id: str
    app: str
    change: tuple[str, ...]  # Entry.change_key: two entries with the same one make the same change
    artifact: str  # Entry.artifact_key
    patch: str | None  # a code fault's patch, workspace-relative

    @classmethod
    def of(cls, item: Loaded) -> Facts:
        e = item.entry
        assert e is not None
        return cls(item.file, e.id, e.app, e.change_key, e.artifact_key, e.code.patch if e.code else None)

    @classmethod
    def partial(cls, item: Loaded) -> Facts | None:
        """The id and app of a file that is not a valid entry (a draft with placeholders): two such
        files of one id are still reported; their change is unknown, so it repeats nothing."""
        data = item.located.data if item.located is not None else None
        if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not data["id"]:
            return None
        app = data.get("app")
        return cls(item.file, data["id"], app if isinstance(app, str) else "", ("(not an entry)", item.file),
                   f"(not an entry) {item.file}", None)


# A catalog rule sees the facts of every file, in order, and yields (facts, field path, message).
CatalogRule = Callable[[list[Facts]], Iterable[tuple[Facts, str, str]]]
