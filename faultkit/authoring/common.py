"""What every authoring path shares: placeholders, ids, entry skeletons, writing without overwriting."""

from __future__ import annotations

import copy

import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor
from faultkit.catalog.lint import discover, load_entry_file
from faultkit.catalog.model import FORMAT, Entry
from faultkit.catalog.placeholders import EFFECT_TODO, is_todo, todo, todo_paths  # noqa: F401
from faultkit.errors import InputError
from faultkit.names import check_name, confine
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write, dump_yaml

ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{2,79}")  # fullmatch: `$` would admit a trailing newline


def check_id(entry_id: str) -> str:
    check_name(entry_id, "id")
    if not ID_RE.fullmatch(entry_id):
        raise InputError(f"id {entry_id!r}: use 3 to 80 lowercase letters, digits and dashes, starting with a "
                         "letter or digit (e.g. minishop-cart-totals)")
    return entry_id


def slug(*parts: str) -> str:
    text = "-".join(p for p in parts if p)
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", text)  # camelCase -> camel-case
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def entry_path(ws: Workspace, app: str, entry_id: str) -> Path:
    path = ws.catalog_dir / check_name(app, "app") / f"{check_name(entry_id, 'id')}.yaml"
    return confine(ws.root, path, "entry file")


def free_id(ws: Workspace, app: str, base: str, taken: Collection[str] = frozenset()) -> str:
    """`<base>-<n>` with the smallest n whose file does not exist (ids never reuse a file)."""
    base = slug(base)[:76].strip("-")
    n = 1
    while f"{base}-{n}" in taken or entry_path(ws, app, f"{base}-{n}").exists():
        n += 1
    return check_id(f"{base}-{n}")


def catalog_entries(ws: Workspace, app: str) -> list[tuple[str, Entry]]:
    """(file, entry) for every schema-valid entry of `app` already in the catalog."""
    folder = ws.catalog_dir / app
    if not folder.is_dir():
        return []
    out = []
    for path in discover(ws, [folder]):
        item, _ = load_entry_file(path, ws)
        if item.entry:
            out.append((item.file, item.entry))
    return out


def skeleton(app: AppDescriptor, entry_id: str, title: str, mechanism: str, category: str, level: str,
             service: str) -> dict[str, Any]:
    """The fields every entry starts with, in the schema's order."""
    spec = app.service(service)
    return {
        "schema": FORMAT,
        "id": check_id(entry_id),
        "app": app.name,
        "title": title,
        "mechanism": mechanism,
        "category": category,
        "level": level,
        "target": {"service": service, "workload": spec.workload, "container": spec.containers[0]},
        "scope": list(app.scope(service)),
    }


def entry_probe(app: AppDescriptor) -> dict[str, Any]:
    """The user-visible symptom check: the descriptor's probe, else the entry service's front page
    (the author may adjust it)."""
    if app.probe is not None:
        return copy.deepcopy(app.probe)
    return {"service": app.entry, "method": "GET", "path": "/", "expect_status": 200}


def service_aliases(app: AppDescriptor, service: str) -> list[str]:
    spec = app.service(service)
    return _unique([service, spec.workload, *spec.aliases])


def render(data: dict[str, Any]) -> str:
    return dump_yaml(data)


def write_new(path: Path, text: str) -> None:
    """Write atomically; never overwrite an entry that exists."""
    if path.exists():
        raise InputError(f"{path}: already exists; choose another id (faultkit never overwrites an entry)")
    atomic_write(path, text)


def _unique(items: list[str]) -> list[str]:
    seen: list[str] = []
    for i in items:
        if i and i not in seen:
            seen.append(i)
    return seen
