"""What the rules consult: the workspace, its apps' descriptors and manifests, the leakage words."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from faultkit.apps.descriptor import AppDescriptor, app_names, descriptor_from_data, load_app, load_descriptor_data
from faultkit.apps.manifests import Doc, load_manifests
from faultkit.apps.observed_graph import RecordedGraph, load_observed
from faultkit.catalog.lint_cache import Store, digest, file_digest
from faultkit.catalog.model import Entry
from faultkit.catalog.rules.records import Loaded
from faultkit.errors import FaultkitError
from faultkit.names import check_name
from faultkit.workspace import Workspace


@dataclass
class Context:
    """What the rules may consult; descriptors and manifests are read once per run."""

    workspace: Workspace
    store: Store | None = None  # the lint cache, which also keeps the parsed manifests and descriptors
    env: str = ""  # the cache's environment digest (lint_cache.environment)
    _apps: dict[str, AppDescriptor | FaultkitError] = field(default_factory=dict)
    _manifests: dict[str, list[Doc] | FaultkitError] = field(default_factory=dict)
    _observed: dict[str, RecordedGraph | None | FaultkitError] = field(default_factory=dict)
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
                self._apps[name] = self._load_app(name)
            except FaultkitError as e:
                self._apps[name] = e
        found = self._apps[name]
        if isinstance(found, FaultkitError):
            raise found
        return found

    def observed(self, app: str) -> RecordedGraph | None:
        """The call graph recorded from the app's traces (apps/<app>/observed-graph.yaml), if any."""
        if app not in self._observed:
            try:
                self._observed[app] = load_observed(self.workspace, app)
            except FaultkitError as e:
                self._observed[app] = e
        found = self._observed[app]
        if isinstance(found, FaultkitError):
            raise found
        return found

    def manifests(self, app: AppDescriptor) -> list[Doc]:
        if app.name not in self._manifests:
            try:
                self._manifests[app.name] = self._load_manifests(app.manifests_dir)
            except FaultkitError as e:
                self._manifests[app.name] = e
        found = self._manifests[app.name]
        if isinstance(found, FaultkitError):
            raise found
        return found

    def _load_app(self, name: str) -> AppDescriptor:
        """The descriptor; its checked data is kept in the cache under the environment digest, which
        covers the descriptor's bytes, the app schema and this code, so a later run that lints one
        changed entry neither parses the descriptor nor compiles the app schema's validator."""
        if self.store is None or not self.env:
            return load_app(self.workspace, name)
        check_name(name, "app")  # as load_app does, before the name becomes a path
        path = self.workspace.apps_dir / name / "app.yaml"
        if not path.is_file():
            return load_app(self.workspace, name)  # which says this is no app here
        side = f"app-{self.env[:32]}-{name}.json"
        cached = self.store.read_json(side)
        if isinstance(cached, dict):
            try:
                return descriptor_from_data(path, cached)
            except (KeyError, TypeError, ValueError, IndexError, FaultkitError):
                pass  # a side file this code did not write: load afresh
        app, data = load_descriptor_data(path)
        if json.loads(json.dumps(data)) == data:
            self.store.write_json(side, data)
        return app

    def _load_manifests(self, folder: Path) -> list[Doc]:
        """The manifests, parsed once per content: YAML's pure-Python composer is the slowest part of
        linting one changed entry (issue 20), so the parsed objects are kept in the cache by the digest
        of the files, when they are plain JSON data (anything else is parsed every time)."""
        files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]) if folder.is_dir() else []
        if self.store is None or not files:
            return load_manifests(folder)
        key = digest("\0".join(f"{f}\0{file_digest(f)}" for f in files).encode())
        cached = self.store.read_json(f"manifests-{key[:32]}.json")
        if isinstance(cached, list):
            return [Doc(d["kind"], d["name"], d["body"], Path(d["file"]), d["line"]) for d in cached]
        docs = load_manifests(folder)
        data = [{"kind": d.kind, "name": d.name, "body": d.body, "file": str(d.file), "line": d.line} for d in docs]
        if json.loads(json.dumps(data)) == data:
            self.store.write_json(f"manifests-{key[:32]}.json", data)
        return docs


# An entry rule yields (field path, message) or (field path, message, "warning"), or with a fourth
# item, the rule name the finding goes by (lint.ADVISORY names those --strict leaves warnings).
EntryRule = Callable[[Context, Entry], Iterable[tuple[str, ...]]]
# A file rule sees the loaded document even when its schema check failed (placeholders break it).
FileRule = Callable[[Context, Loaded], Iterable[tuple[str, str]]]
