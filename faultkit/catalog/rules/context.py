"""What the rules consult and what they produce: the rules' context, findings and per-file facts."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from faultkit.apps.descriptor import AppDescriptor, app_names, load_app
from faultkit.apps.manifests import Doc, load_manifests
from faultkit.catalog.model import Entry
from faultkit.errors import FaultkitError
from faultkit.workspace import Workspace
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
    id_line: int
    app: str
    change: tuple[str, ...]  # Entry.change_key: two entries with the same one make the same change
    artifact: str  # Entry.artifact_key
    patch: str | None  # a code fault's patch, workspace-relative

    @classmethod
    def of(cls, item: Loaded) -> Facts:
        e = item.entry
        assert e is not None
        line = item.located.line(("id",)) if item.located else 1
        return cls(item.file, e.id, line, e.app, e.change_key, e.artifact_key, e.code.patch if e.code else None)


@dataclass
class Context:
    """What the rules may consult; descriptors and manifests are read once per run."""

    workspace: Workspace
    _apps: dict[str, AppDescriptor | FaultkitError] = field(default_factory=dict)
    _manifests: dict[str, list[Doc] | FaultkitError] = field(default_factory=dict)
    _app_names: list[str] | None = None

    @property
    def app_names(self) -> list[str]:
        if self._app_names is None:
            self._app_names = app_names(self.workspace)
        return self._app_names

    def app(self, name: str) -> AppDescriptor:
        if name not in self._apps:
            try:
                self._apps[name] = load_app(self.workspace, name)
            except FaultkitError as e:
                self._apps[name] = e
        found = self._apps[name]
        if isinstance(found, FaultkitError):
            raise found
        return found

    def manifests(self, app: AppDescriptor) -> list[Doc]:
        if app.name not in self._manifests:
            try:
                self._manifests[app.name] = load_manifests(app.manifests_dir)
            except FaultkitError as e:
                self._manifests[app.name] = e
        found = self._manifests[app.name]
        if isinstance(found, FaultkitError):
            raise found
        return found


# An entry rule yields (field path, message) or (field path, message, "warning").
EntryRule = Callable[[Context, Entry], Iterable[tuple[str, ...]]]
# A file rule sees the loaded document even when its schema check failed (placeholders break it).
FileRule = Callable[[Context, Loaded], Iterable[tuple[str, str]]]
# A catalog rule sees the facts of every file, in order, and yields (facts, field path, message).
CatalogRule = Callable[[list[Facts]], Iterable[tuple[Facts, str, str]]]
