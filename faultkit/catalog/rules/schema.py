"""Reading a catalog file: loaded, and checked against the entry schema."""

from __future__ import annotations

from pathlib import Path

from faultkit.catalog.model import entry_from_data
from faultkit.catalog.rules.files import display
from faultkit.catalog.rules.records import Finding, Loaded
from faultkit.errors import FaultkitError
from faultkit.schema import Problem, check_document
from faultkit.workspace import Workspace
from faultkit.yamlio import decode, load_located, load_text


def load_entry_file(path: Path, workspace: Workspace, content: bytes | None = None) -> tuple[Loaded, list[Finding]]:
    """`content`: the file's bytes when the caller has read them already (lint does, for the cache key)."""
    name = display(path, workspace)
    try:
        located = load_located(path) if content is None else load_text(decode(content, path), path)
    except FaultkitError as e:
        message = str(e).removeprefix(f"{path}:").removeprefix(f"{path}").lstrip(": ")
        line = int(message.split(":")[0]) if message.split(":")[0].isdigit() else 1
        message = message.split(": ", 1)[1] if message.split(":")[0].isdigit() else message
        return Loaded(name, None, None), [Finding(name, line, "(file)", message, "error", "read")]
    if not isinstance(located.data, dict):
        found = type(located.data).__name__
        return Loaded(name, located, None), [Finding(name, 1, "(document)", f"expected a mapping, found {found}")]
    problems = check_document(located, "entry")
    findings = [_finding(name, p) for p in problems]
    entry = entry_from_data(located.data) if not any(p.severity == "error" for p in problems) else None
    return Loaded(name, located, entry), findings


def _finding(name: str, p: Problem) -> Finding:
    return Finding(name, p.line, p.path, p.message, p.severity, p.rule)
