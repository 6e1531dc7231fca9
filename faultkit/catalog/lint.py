"""`catalog lint`: schema checks, then semantic checks against the application descriptors, then the
whole catalog's invariants. The rules live in catalog/rules/; this module runs them.

Every problem is reported at once, each with file, line and field path. Lint never writes entries;
given a Store it caches each file's result (catalog/lint_cache.py), and the invariants are checked
from the facts of every file, so a one-file change re-reads one file.
"""

from __future__ import annotations

import importlib
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Union

from faultkit.catalog.lint_cache import FileLint, Pack, Store, digest, environment, file_digest, key_of, stat_of
from faultkit.catalog.rules.files import discover, display
from faultkit.catalog.rules.invariants import CATALOG_RULES
from faultkit.catalog.rules.records import CatalogRule, Facts, Finding, Loaded
from faultkit.errors import FaultkitError
from faultkit.safeio import read_bytes
from faultkit.workspace import Workspace

if TYPE_CHECKING:
    from faultkit.catalog.model import Entry
    from faultkit.catalog.rules.context import Context, EntryRule, FileRule

__all__ = ["Finding", "Linter", "Loaded", "Report", "discover", "lint", "load_entry_file"]

# The rule set, as module.function under faultkit.catalog.rules. The rules (and with them YAML, the
# schema validator and the app model) are imported on the first file the cache cannot answer, so a
# warm run imports none of them; the names and the modules' source are part of the cache key.
ENTRY_RULES: tuple[str, ...] = ("semantic.check_target", "semantic.check_observed", "patches.check_code",
                                "semantic.check_config", "semantic.check_direct", "leakage.check_leakage",
                                "leakage.check_title")
FILE_RULES: tuple[str, ...] = ("leakage.check_todo",)
# Rules that read an entry's admitting evidence are given by the command layer to the Linter
# (`evidence_rules`: faultkit/labels/ reads entries through catalog, so catalog cannot import it), never
# kept in a module global: what `catalog build` checks must not depend on what ran before it in the
# process. Their findings are advice for the next validation (editing the entry makes its verdict
# stale), so --strict leaves them warnings. A cached result of such a rule counts while the admitting
# bundle's MANIFEST.json and labels.json are unchanged. A rule is given as a callable or as
# "module:function", imported on the first file the cache cannot answer (so it costs a warm run nothing).
EvidenceRule = Union["EntryRule", str]
# `unchecked`: a check that needs files this checkout lacks (an upstream app's manifests, which each
# user brings): the entry is not wrong, so --strict leaves it a warning too.
ADVISORY = ("declared_evidence", "unchecked")


def rule(name: str) -> Callable[..., Any]:
    module, function = name.split(".")
    found: Callable[..., Any] = getattr(importlib.import_module(f"faultkit.catalog.rules.{module}"), function)
    return found


def rule_sources(names: Iterable[str]) -> list[Path]:
    """The source file of each named rule's module, found without importing it, and every other
    module of rules/ (a rule's helpers, such as wordforms.py for leakage, change its results too)."""
    here = Path(__file__).parent / "rules"
    return sorted({*(here / f"{n.split('.')[0]}.py" for n in names), *here.glob("*.py")})


def _named(name: str) -> Callable[..., Any]:
    module, function = name.split(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), function)
    return found


def evidence_sources(rules: Iterable[Callable[..., Any] | str]) -> list[Path]:
    """Every module of the package each registered evidence rule comes from (labels/*.py), found
    without importing it when the rule is given by name."""
    top = Path(__file__).parent.parent
    folders = set()
    for r in rules:
        module = r.split(":")[0] if isinstance(r, str) else r.__module__
        if module.startswith("faultkit."):
            folders.add((top / Path(*module.split(".")[1:])).parent)
        elif not isinstance(r, str):
            folders.add(Path(str(getattr(sys.modules[r.__module__], "__file__", ""))).parent)
    return sorted(p for folder in folders if folder.name for p in folder.glob("*.py"))


def load_entry_file(path: Path, workspace: Workspace, content: bytes | None = None) -> tuple[Loaded, list[Finding]]:
    """One file loaded and checked against the entry schema (see rules/schema.py)."""
    from faultkit.catalog.rules.schema import load_entry_file as load

    return load(path, workspace, content)


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

    def __init__(self, workspace: Workspace, store: Store | None = None,
                 evidence_rules: Sequence[EvidenceRule] = ()) -> None:
        self.workspace = workspace
        self._evidence = tuple(evidence_rules)
        self._ctx: Context | None = None
        self._entry_rules: list[EntryRule] = []
        self._file_rules: list[FileRule] = []
        names = [*ENTRY_RULES, *FILE_RULES, *(f"invariants.{r.__name__}" for r in CATALOG_RULES)]
        sources = rule_sources(names) + evidence_sources(self._evidence)
        names += [r if isinstance(r, str) else f"{r.__module__}:{r.__qualname__}" for r in self._evidence]
        env = environment(workspace, names, sources) if store else ""
        self.pack: Pack | None = store.pack(env) if store else None
        self._entries: dict[str, Entry] = {}
        self.cached = 0
        self._deps: dict[str, str] = {}
        self._paths: dict[str, Path] = {}

    def result(self, path: Path) -> tuple[str, FileLint]:
        """(display name, result) of one file, from the cache when its key and dependencies match."""
        return self.results([path])[0]

    def results(self, paths: Iterable[Path], jobs: int = 0) -> list[tuple[str, FileLint]]:
        """result() of each path, in order. When many files miss the cache, they are checked on
        `jobs` processes (0: one per core the process may use), as ruff checks a cold repository."""
        looked = [self._lookup(p) for p in paths]
        checked = iter(checked_all(self, [m for _, m in looked if isinstance(m, _Miss)], jobs))
        out = []
        for name, found in looked:
            if isinstance(found, _Miss):
                fresh, entry = next(checked)
                if entry is not None:
                    self._entries[name] = entry
                if found.key is not None and self.pack is not None:
                    self.pack.put(found.key, fresh)
                found = fresh
            out.append((name, found))
        return out

    def _lookup(self, path: Path) -> tuple[str, FileLint | _Miss]:
        """The cached result of one file, or what checking it afresh needs."""
        name = display(path, self.workspace)
        self._paths[name] = path
        if self.pack is None:
            return name, _Miss(path)
        try:
            st = os.stat(path)
        except OSError:
            return name, _Miss(path)  # missing or unreadable: the loader says so, nothing to cache
        status = stat_of(st)
        known = self.pack.known_digest(name, status) if stat.S_ISREG(st.st_mode) else None
        if known is not None:  # a settled file with the very status it had when it was read: not read again
            hit = self.pack.get(key_of(self.pack.env, name, known))
            if hit is not None and all(self._dep(p) == d for p, d in hit.deps):
                self.cached += 1
                return name, hit
        try:
            content = read_bytes(path)  # never a FIFO or a device: those would hang the read
        except FaultkitError:
            return name, _Miss(path)  # a folder, not regular, too large: the loader says so
        content_digest = digest(content)
        self.pack.remember(name, status, content_digest, time.time_ns())
        key = key_of(self.pack.env, name, content_digest)
        hit = self.pack.get(key)
        if hit is not None and all(self._dep(p) == d for p, d in hit.deps):
            self.cached += 1
            return name, hit
        return name, _Miss(path, content, key)

    def report(self, given: list[tuple[str, FileLint]], rest: list[tuple[str, FileLint]], strict: bool) -> Report:
        """Findings of the given files and the invariants, blaming a given file over one of the rest."""
        wanted = {name for name, _ in given}
        facts = [r.facts for _, r in (*rest, *given) if r.facts]
        findings = [f for _, r in given for f in r.findings]
        paths = {name: path for name, path in self._paths.items() if name in wanted}
        findings += invariant_findings(facts, CATALOG_RULES, wanted, paths)
        if strict:
            findings = [f if f.rule in ADVISORY else replace(f, severity="error") for f in findings]
        findings.sort(key=lambda f: (f.file, f.line, f.path, f.message))
        entries = tuple(self._entries[name] for name, _ in given if name in self._entries)
        return Report(tuple(findings), len(given), entries, tuple(facts), self.cached)

    def save(self) -> None:
        if self.pack is not None:
            self.pack.save()

    def _context(self) -> Context:
        if self._ctx is None:
            from faultkit.catalog.rules.context import Context

            self._ctx = Context(self.workspace, self.pack.store if self.pack else None,
                                self.pack.env if self.pack else "")
            evidence = [_named(r) if isinstance(r, str) else r for r in self._evidence]
            self._entry_rules = [*(rule(n) for n in ENTRY_RULES), *evidence]
            self._file_rules = [rule(n) for n in FILE_RULES]
        return self._ctx

    def check(self, miss: _Miss) -> tuple[FileLint, Entry | None]:
        """One file checked afresh: its result, and its entry when it is valid."""
        ctx = self._context()
        item, findings = load_entry_file(miss.path, self.workspace, miss.content)
        for file_rule in self._file_rules:
            findings += [_at(item, p, m, file_rule.__name__) for p, m in file_rule(ctx, item)]
        if item.entry is None:
            return FileLint(tuple(findings), Facts.partial(item)), None
        findings.extend(_entry_findings(ctx, item, self._entry_rules))
        read = [item.entry.code.patch] if item.entry.code else []
        v = item.entry.validation
        if self._evidence and v is not None and v.bundle:
            read += [f"{v.bundle}/MANIFEST.json", f"{v.bundle}/labels.json"]
        deps = tuple((rel, self._dep(rel)) for rel in read)
        return FileLint(tuple(findings), Facts.of(item), deps), item.entry

    def _dep(self, rel: str) -> str:
        """The digest of a file a result read (a patch), once per run; "-" when it is unreadable."""
        if rel not in self._deps:
            self._deps[rel] = _dep_digest(self.workspace.root, rel)
        return self._deps[rel]


@dataclass(frozen=True)
class _Miss:
    """A file the cache cannot answer: checked afresh, then cached under `key` (None: not cacheable)."""

    path: Path
    content: bytes | None = None
    key: str | None = None


# Below this many files to check afresh, a second process costs more (its start, the results sent
# back) than it saves; a cold 1,000-entry catalog is four times over it.
PARALLEL_FROM = 250


def checked_all(linter: Linter, misses: list[_Miss], jobs: int = 0) -> list[tuple[FileLint, Entry | None]]:
    """linter.check of every miss, in order: on forked processes when they are many."""
    n = jobs or len(os.sched_getaffinity(0))
    if n < 2 or len(misses) < PARALLEL_FROM or not hasattr(os, "fork"):
        return [linter.check(m) for m in misses]
    from faultkit.catalog import lint_workers

    linter._context()  # the rules and their context built once, then inherited by every worker
    return lint_workers.map_forked(linter.check, misses, n)


def _dep_digest(root: Path, rel: str) -> str:
    """The digest of a file inside the workspace, as catalog.patches.safe_path would find it; "-"
    for a path that rule refuses (the result records the refusal, whatever the file holds)."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or rel.startswith("~") or ".." in pure.parts:
        return "-"
    try:
        real = (root / pure).resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11); the patch rule reports it
        return "-"
    return file_digest(real) if real.is_relative_to(root) and real.is_file() else "-"


def lint(workspace: Workspace, paths: Iterable[Path] = (), strict: bool = False, store: Store | None = None,
         jobs: int = 0, evidence_rules: Sequence[EvidenceRule] = ()) -> Report:
    files = discover(workspace, paths)
    linter = Linter(workspace, store, evidence_rules)
    given = linter.results(files, jobs)
    rest: list[tuple[str, FileLint]] = []
    if files and paths:
        # the rest of the catalog comes first, so a new entry repeating an old id or change is the one blamed
        seen = {name for name, _ in given}
        rest = linter.results([p for p in discover(workspace) if display(p, workspace) not in seen], jobs)
    report = linter.report(given, rest, strict)
    linter.save()
    return report


def invariant_findings(facts: list[Facts], rules: Iterable[CatalogRule], wanted: set[str],
                       paths: dict[str, Path]) -> Iterator[Finding]:
    """The catalog rules' findings on the `wanted` files. The line of a finding is looked up only
    when there is one (rare), so neither a fresh nor a cached result pays for line numbers."""
    for rule in rules:
        for f, path, message in rule(facts):
            if f.file in wanted:
                line = _line(paths[f.file], path) if path != "(entry)" and f.file in paths else 1
                yield Finding(f.file, line, path, message, "error", rule.__name__.removeprefix("check_"))


def _line(file: Path, path: str) -> int:
    from faultkit.yamlio import load_located

    try:
        located = load_located(file)
    except FaultkitError:
        return 1
    return located.line(_pointer(path))


def _entry_findings(ctx: Context, item: Loaded, rules: list[EntryRule]) -> Iterator[Finding]:
    assert item.entry is not None
    for entry_rule in rules:
        try:
            for path, message, *more in entry_rule(ctx, item.entry):  # more: severity, then a rule name of its own
                yield _at(item, path, message, more[1] if len(more) > 1 else entry_rule.__name__, *more[:1])
        except FaultkitError as e:
            where = "app" if entry_rule.__name__ == "check_target" else "(entry)"
            yield _at(item, where, str(e), entry_rule.__name__)


def _at(item: Loaded, path: str, message: str, rule: str, severity: str = "error") -> Finding:
    line = item.located.line(_pointer(path)) if item.located else 1
    return Finding(item.file, line, path, message, severity, rule.removeprefix("check_"))


def _pointer(path: str) -> tuple[str | int, ...]:
    return tuple(int(p) if p.isdigit() else p for p in path.replace("[", ".").replace("]", "").split("."))
