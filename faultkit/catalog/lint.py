"""`catalog lint`: schema checks, then semantic checks against the application descriptors, then the
whole catalog's invariants. The rules live in catalog/rules/; this module runs them.

Every problem is reported at once, each with file, line and field path. Lint never writes entries;
given a Store it caches each file's result (catalog/lint_cache.py), and the invariants are checked
from the facts of every file, so a one-file change re-reads one file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from faultkit.catalog.lint_cache import Pack, Result, Store, environment, file_digest, file_key
from faultkit.catalog.model import Entry
from faultkit.catalog.patches import safe_path
from faultkit.catalog.rules.context import CatalogRule, Context, EntryRule, Facts, FileRule, Finding, Loaded
from faultkit.catalog.rules.invariants import CATALOG_RULES
from faultkit.catalog.rules.leakage import check_leakage, check_title, check_todo
from faultkit.catalog.rules.patches import check_code
from faultkit.catalog.rules.schema import discover, display, load_entry_file
from faultkit.catalog.rules.semantic import check_config, check_direct, check_target
from faultkit.errors import FaultkitError
from faultkit.workspace import Workspace

__all__ = ["Finding", "Loaded", "Report", "discover", "lint", "load_entry_file"]

ENTRY_RULES: tuple[EntryRule, ...] = (check_target, check_code, check_config, check_direct, check_leakage, check_title)
FILE_RULES: tuple[FileRule, ...] = (check_todo,)


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    files: int
    entries: tuple[Entry, ...]  # the valid entries lint parsed (all of them without a cache)
    facts: tuple[Facts, ...] = ()  # every valid entry the invariants saw: the given files and the rest
    cached: int = field(default=0, compare=False)  # files whose result came from the cache

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)


class Linter:
    """One lint run: the rules' context, and the cache pack when a Store is given."""

    def __init__(self, workspace: Workspace, store: Store | None = None) -> None:
        self.workspace = workspace
        self.ctx = Context(workspace)
        rules = [*ENTRY_RULES, *FILE_RULES, *CATALOG_RULES]
        self.pack: Pack | None = store.pack(environment(workspace, rules)) if store else None
        self._entries: dict[str, Entry] = {}
        self.cached = 0
        self._deps: dict[str, str] = {}

    def result(self, path: Path) -> tuple[str, Result]:
        """(display name, result) of one file, from the cache when its key and dependencies match."""
        name = display(path, self.workspace)
        if self.pack is None:
            return name, self._fresh(path)
        try:
            content = path.read_bytes()
        except OSError:
            return name, self._fresh(path)  # missing or a folder: the loader says so, nothing to cache
        key = file_key(self.pack.env, name, content)
        hit = self.pack.get(key)
        if hit is not None and all(self._dep(p) == d for p, d in hit.deps):
            self.cached += 1
            return name, hit
        fresh = self._fresh(path)
        self.pack.put(key, fresh)
        return name, fresh

    def report(self, given: list[tuple[str, Result]], rest: list[tuple[str, Result]], strict: bool) -> Report:
        """Findings of the given files and the invariants, blaming a given file over one of the rest."""
        wanted = {name for name, _ in given}
        facts = [r.facts for _, r in (*rest, *given) if r.facts]
        findings = [f for _, r in given for f in r.findings]
        findings += [f for f in invariant_findings(facts, CATALOG_RULES) if f.file in wanted]
        if strict:
            findings = [replace(f, severity="error") for f in findings]
        findings.sort(key=lambda f: (f.file, f.line, f.path, f.message))
        entries = tuple(self._entries[name] for name, _ in given if name in self._entries)
        return Report(tuple(findings), len(given), entries, tuple(facts), self.cached)

    def save(self) -> None:
        if self.pack is not None:
            self.pack.save()

    def _fresh(self, path: Path) -> Result:
        item, findings = load_entry_file(path, self.workspace)
        for file_rule in FILE_RULES:
            findings += [_at(item, p, m, file_rule.__name__) for p, m in file_rule(self.ctx, item)]
        if item.entry is None:
            return Result(tuple(findings), None)
        self._entries[item.file] = item.entry
        findings.extend(_entry_findings(self.ctx, item))
        patch = item.entry.code.patch if item.entry.code else None
        deps = ((patch, self._dep(patch)),) if patch else ()
        return Result(tuple(findings), Facts.of(item), deps)

    def _dep(self, rel: str) -> str:
        """The digest of a file a result read (a patch), once per run; "-" when it is unreadable."""
        if rel not in self._deps:
            try:
                self._deps[rel] = file_digest(safe_path(self.workspace.root, rel, "patch"))
            except FaultkitError:
                self._deps[rel] = "-"
        return self._deps[rel]


def lint(workspace: Workspace, paths: Iterable[Path] = (), strict: bool = False, store: Store | None = None) -> Report:
    files = discover(workspace, paths)
    linter = Linter(workspace, store)
    given = [linter.result(f) for f in files]
    rest: list[tuple[str, Result]] = []
    if files and paths:
        # the rest of the catalog comes first, so a new entry repeating an old id or change is the one blamed
        seen = {p.resolve() for p in files}
        rest = [linter.result(p) for p in discover(workspace) if p.resolve() not in seen]
    report = linter.report(given, rest, strict)
    linter.save()
    return report


def invariant_findings(facts: list[Facts], rules: Iterable[CatalogRule]) -> Iterator[Finding]:
    for rule in rules:
        for f, path, message in rule(facts):
            line = f.id_line if path == "id" else 1
            yield Finding(f.file, line, path, message, "error", rule.__name__.removeprefix("check_"))


def _entry_findings(ctx: Context, item: Loaded) -> Iterator[Finding]:
    assert item.entry is not None
    for rule in ENTRY_RULES:
        try:
            for path, message, *severity in rule(ctx, item.entry):
                yield _at(item, path, message, rule.__name__, *severity)
        except FaultkitError as e:
            yield _at(item, "app" if rule is check_target else "(entry)", str(e), rule.__name__)


def _at(item: Loaded, path: str, message: str, rule: str, severity: str = "error") -> Finding:
    pointer = tuple(int(p) if p.isdigit() else p for p in path.replace("[", ".").replace("]", "").split("."))
    line = item.located.line(pointer) if item.located else 1
    return Finding(item.file, line, path, message, severity, rule.removeprefix("check_"))
