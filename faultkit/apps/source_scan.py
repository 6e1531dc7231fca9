"""`apps import --source DIR`: references to the manifests' Services in a checkout of the
application's source and configuration, each marked `path:line`.

A file belongs to the service whose name (or alias, or workload name) is a folder on its path
(`src/emailservice/...`, `ts-order-service/src/main/resources/application.yml`); files outside every
service's folder, tests and vendored or built trees are not read, so nothing is attributed by guess.

The source also settles what a loaded ConfigMap offers but the code never asks for (issue 31): a
variable (envFrom, configMapKeyRef) whose name no file of the service names, as `ACCOUNTS_URL` or
`accounts.url`, and a mounted file no file of the service names, are not edges. A service of
which no file was read keeps every such reference: nothing is known against it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faultkit.apps.classify import TELEMETRY
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
FOLDER_DEPTH = 3  # how deep a service's folder is looked for: src/<group>/<service>


def _owners(services: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for s in services:
        for n in (s["name"], s["workload"]["name"], *s.get("aliases", [])):
            out.setdefault(n.lower(), s["name"])
    return out


@dataclass
class SourceScan:
    refs: list[Reference] = field(default_factory=list)
    read: dict[str, int] = field(default_factory=dict)  # files read per service
    named: dict[str, set[str]] = field(default_factory=dict)  # of the names asked about, those a file names


def source_references(root: Path, services: list[dict[str, Any]], wanted: dict[str, set[str]] | None = None
                      ) -> SourceScan:
    """The references in each service's files, how many files were read, and which of `wanted`
    (names per service: ConfigMap variables and files) its files name."""
    if not root.is_dir():
        raise InputError(f"{root}: --source is not a folder; give a checkout of the application's source")
    owners = _owners(services)
    scan = SourceScan(read={s["name"]: 0 for s in services})
    patterns = {s: [(n, _name_pattern(n)) for n in sorted(names)] for s, names in (wanted or {}).items()}
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
        scan.read[owner] += 1
        scan.refs.extend(text_references(owner, text, rel.as_posix()))
        found = scan.named.setdefault(owner, set())
        found.update(n for n, pattern in patterns.get(owner, []) if n not in found and pattern.search(text))
    return scan


def _name_pattern(name: str) -> re.Pattern[str]:
    """`ACCOUNTS_URL` as written, or as Spring binds it (`accounts.url`, `accounts-url`), as a whole word."""
    forms = {name, name.lower().replace("_", "."), name.lower().replace("_", "-")}
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, sorted(forms))) + r")(?![\w-])", re.I)


def configmap_name(r: Reference) -> str | None:
    """What the code must name to read this ConfigMap reference: its variable, or its mounted file's
    name; None when the reference is not from a ConfigMap."""
    if r.found_in is None or not r.found_in.startswith("ConfigMap/"):
        return None
    if not r.free_text:
        return r.name
    key = r.found_in.split(" ", 1)[1].rpartition(":")[0]  # "ConfigMap/x application.yml:3"
    return key.rsplit("/", 1)[-1]


# files a framework reads without the code naming them (Spring Boot's, mounted under /config); the
# OpenTelemetry SDKs read their OTEL_* variables the same way
IMPLICIT_FILES = re.compile(r"^(application|bootstrap)(-[\w-]+)?\.(ya?ml|properties)$")


def unread(refs: list[Reference], scan: SourceScan) -> tuple[list[Reference], list[Reference]]:
    """(kept, left out): a ConfigMap reference of a service whose files were read but never name it."""
    kept: list[Reference] = []
    dropped: list[Reference] = []
    for r in refs:
        name = configmap_name(r)
        checked = (name is not None and scan.read.get(r.caller, 0) > 0 and not IMPLICIT_FILES.match(name)
                   and not TELEMETRY.search(name))
        (dropped if checked and name not in scan.named.get(r.caller, set()) else kept).append(r)
    return kept, dropped


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
    """(folder relative to root, language) of each service that has a folder of its own name: at
    the top (`src/emailservice`) or grouped deeper (Bank of Anthos' `src/accounts/contacts`), the
    shallowest first, as files are attributed (source_references)."""
    owners = _owners(services)
    out: dict[str, tuple[str, str]] = {}
    level = [root]
    for _ in range(FOLDER_DEPTH):
        deeper = []
        for parent in level:
            for d in sorted(p for p in parent.iterdir() if p.is_dir() and not p.is_symlink()):
                name = owners.get(d.name.lower())
                if name is None:
                    if d.name not in SKIP_DIRS and not d.name.startswith("."):
                        deeper.append(d)
                elif name not in out:
                    out[name] = (d.relative_to(root).as_posix(), _language(d))
        level = deeper
    return out


def _language(folder: Path) -> str:
    lang = next((lang for marker, lang in LANGUAGES if (folder / marker).is_file()), "")
    if not lang and (any(folder.glob("*.csproj")) or any(folder.glob("src/*.csproj"))):
        lang = "csharp"
    return lang or "unknown"
