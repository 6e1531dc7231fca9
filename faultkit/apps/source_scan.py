"""`apps import --source DIR`: references to the manifests' Services in a checkout of the
application's source and configuration, each marked `path:line`.

A file belongs to the service whose name (or alias, or workload name) is a folder on its path
(`src/emailservice/...`, `ts-order-service/src/main/resources/application.yml`); files outside every
service's folder, tests and vendored or built trees are not read, so nothing is attributed by guess.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from faultkit.apps.references import Reference, text_references
from faultkit.errors import InputError
from faultkit.safeio import read_bytes

TEXT_SUFFIXES = frozenset({
    ".java", ".kt", ".scala", ".groovy", ".go", ".py", ".js", ".mjs", ".ts", ".cs", ".rb", ".php", ".rs",
    ".cpp", ".cc", ".h", ".ex", ".exs", ".properties", ".yml", ".yaml", ".json", ".toml", ".ini", ".conf",
    ".cfg", ".env", ".xml",
})
SKIP_DIRS = frozenset({".git", "node_modules", "vendor", "target", "build", "dist", "__pycache__", ".venv",
                       "venv", "test", "tests", "__tests__", "testdata", "spec", "mocks", ".idea", ".gradle"})
MAX_FILE = 512 * 1024


def _owners(services: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for s in services:
        for n in (s["name"], s["workload"]["name"], *s.get("aliases", [])):
            out.setdefault(n.lower(), s["name"])
    return out


def source_references(root: Path, services: list[dict[str, Any]]) -> list[Reference]:
    if not root.is_dir():
        raise InputError(f"{root}: --source is not a folder; give a checkout of the application's source")
    owners = _owners(services)
    refs: list[Reference] = []
    for path in _files(root):
        rel = path.relative_to(root)
        owner = next((owners[p.lower()] for p in rel.parts[:-1] if p.lower() in owners), None)
        if owner is None:
            continue
        try:
            # regular files only, stat'ed before opening: a FIFO in the checkout is refused by name, never read
            text = read_bytes(path, MAX_FILE).decode("utf-8")
        except UnicodeDecodeError:
            continue
        refs.extend(text_references(owner, text, rel.as_posix()))
    return refs


def _files(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            path = Path(folder) / name
            if path.suffix.lower() in TEXT_SUFFIXES and not path.is_symlink() and path.stat().st_size <= MAX_FILE:
                yield path


# a build file at a service folder's top names its language
LANGUAGES = (("go.mod", "go"), ("pom.xml", "java"), ("build.gradle", "java"), ("build.gradle.kts", "kotlin"),
             ("Cargo.toml", "rust"), ("package.json", "javascript"), ("requirements.txt", "python"),
             ("pyproject.toml", "python"), ("Gemfile", "ruby"), ("composer.json", "php"), ("mix.exs", "elixir"),
             ("CMakeLists.txt", "cpp"))


def service_folders(root: Path, services: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """(folder relative to root, language) of each service that has a top-level folder of its own name."""
    owners = _owners(services)
    out: dict[str, tuple[str, str]] = {}
    for d in sorted(p for p in root.iterdir() if p.is_dir() and p.name.lower() in owners):
        name = owners[d.name.lower()]
        if name in out:
            continue
        lang = next((lang for marker, lang in LANGUAGES if (d / marker).is_file()), "")
        if not lang and (any(d.glob("*.csproj")) or any(d.glob("src/*.csproj"))):
            lang = "csharp"
        out[name] = (d.name, lang or "unknown")
    return out
