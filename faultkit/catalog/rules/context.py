"""What the rules consult: the workspace, its apps' descriptors and manifests, the leakage words."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from faultkit.apps.descriptor import AppDescriptor, app_names, load_app
from faultkit.apps.manifests import Doc, load_manifests
from faultkit.catalog.model import Entry
from faultkit.catalog.rules.records import Loaded
from faultkit.errors import FaultkitError
from faultkit.workspace import Workspace


@dataclass
class Context:
    """What the rules may consult; descriptors and manifests are read once per run."""

    workspace: Workspace
    _apps: dict[str, AppDescriptor | FaultkitError] = field(default_factory=dict)
    _manifests: dict[str, list[Doc] | FaultkitError] = field(default_factory=dict)
    _app_names: list[str] | None = None
    words: tuple[str, ...] | None = None  # the leakage word list, filled by the leakage rules on first use

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
