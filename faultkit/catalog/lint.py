"""`catalog lint`: schema checks, then semantic checks against the application descriptors.

Every problem is reported at once, each with file, line and field path. Lint never writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from faultkit.apps.descriptor import AppDescriptor, app_names, load_app, suggest
from faultkit.apps.manifests import Doc, find_container, get_field, load_manifests
from faultkit.authoring.leakage import check_leakage, check_title, check_todo
from faultkit.catalog.config_rules import kind_mismatch, refusal
from faultkit.catalog.model import Entry, entry_from_data
from faultkit.catalog.patches import patch_file_problems, read_patch, safe_path
from faultkit.catalog.vocab import ACTIONS
from faultkit.errors import FaultkitError
from faultkit.schema import Problem, check_document
from faultkit.workspace import Workspace
from faultkit.yamlio import Located, load_located


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


@dataclass
class Context:
    """What the rules may consult; descriptors and manifests are read once per app."""

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


# yields (field path, message) or (field path, message, "warning")
EntryRule = Callable[[Context, Entry], Iterable[tuple[str, ...]]]
CatalogRule = Callable[[Context, list[Loaded]], Iterable[tuple[Loaded, str, str]]]


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    files: int
    entries: tuple[Entry, ...]

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)


def discover(workspace: Workspace, paths: Iterable[Path] = ()) -> list[Path]:
    """The entry files named by `paths` (files or folders), or every file under catalog/."""
    paths = list(paths) or [workspace.catalog_dir]
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            # a folder named like an entry is reported by the loader, not silently skipped
            out.extend(sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml")))
        else:
            out.append(p)  # a missing or odd file is reported by the loader, with its name
    return out


def load_entry_file(path: Path, workspace: Workspace) -> tuple[Loaded, list[Finding]]:
    name = _display(path, workspace)
    try:
        located = load_located(path)
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


def lint(workspace: Workspace, paths: Iterable[Path] = (), strict: bool = False) -> Report:
    files = discover(workspace, paths)
    ctx = Context(workspace)
    findings: list[Finding] = []
    loaded: list[Loaded] = []
    for f in files:
        item, problems = load_entry_file(f, workspace)
        loaded.append(item)
        findings.extend(problems)
        if item.entry:
            findings.extend(_entry_findings(ctx, item))
    wanted = {item.file for item in loaded}
    # the rest of the catalog comes first, so a new entry repeating an old id or change is the one blamed
    context = _rest_of_catalog(workspace, files) + loaded if paths else loaded
    for rule in CATALOG_RULES:
        for item, path, message in rule(ctx, context):
            if item.file in wanted:
                findings.append(_at(item, path, message, rule.__name__))
    if strict:
        findings = [Finding(f.file, f.line, f.path, f.message, f.severity if f.rule in ADVISORY else "error", f.rule)
                    for f in findings]
    findings.sort(key=lambda f: (f.file, f.line, f.path, f.message))
    return Report(tuple(findings), len(files), tuple(i.entry for i in loaded if i.entry))


def _rest_of_catalog(workspace: Workspace, given: list[Path]) -> list[Loaded]:
    """The catalog's other entries, so ids and changes stay unique across the whole catalog."""
    seen = {p.resolve() for p in given}
    rest = [p for p in discover(workspace) if p.resolve() not in seen]
    return [item for item, _ in map(lambda p: load_entry_file(p, workspace), rest) if item.entry]


def _entry_findings(ctx: Context, item: Loaded) -> Iterator[Finding]:
    assert item.entry is not None
    for rule in ENTRY_RULES + EVIDENCE_RULES:
        try:
            for path, message, *severity in rule(ctx, item.entry):
                yield _at(item, path, message, rule.__name__, *severity)
        except FaultkitError as e:
            yield _at(item, "app" if rule is check_target else "(entry)", str(e), rule.__name__)


def _at(item: Loaded, path: str, message: str, rule: str, severity: str = "error") -> Finding:
    pointer = tuple(int(p) if p.isdigit() else p for p in path.replace("[", ".").replace("]", "").split("."))
    line = item.located.line(pointer) if item.located else 1
    return Finding(item.file, line, path, message, severity, rule.removeprefix("check_"))


def _finding(name: str, p: Problem) -> Finding:
    return Finding(name, p.line, p.path, p.message, p.severity, p.rule)


def _display(path: Path, workspace: Workspace) -> str:
    try:
        return path.resolve().relative_to(workspace.root).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- entry rules


def check_target(ctx: Context, e: Entry) -> Iterator[tuple[str, str]]:
    if e.app not in ctx.app_names:
        yield "app", f"{e.app!r} is not an application of this catalog{suggest(e.app, ctx.app_names)}"
        return
    app = ctx.app(e.app)
    names = app.service_names
    if e.target.service not in names:
        yield "target.service", f"{e.target.service!r} is not a service of {app.name}{suggest(e.target.service, names)}"
        return
    spec = app.service(e.target.service)
    if e.target.workload and e.target.workload != spec.workload:
        yield "target.workload", f"{e.target.service} runs as workload {spec.workload!r}, not {e.target.workload!r}"
    if e.target.container and e.target.container not in spec.containers:
        yield (
            "target.container",
            f"{e.target.container!r} is not a container of {spec.workload} ({', '.join(spec.containers)})",
        )
    if e.probe.service not in names:
        yield "probe.service", f"{e.probe.service!r} is not a service of {app.name}{suggest(e.probe.service, names)}"
    computed = set(app.scope(e.target.service))
    if e.target.service not in e.scope:
        yield "scope", f"the scope must include the target {e.target.service!r}"
    for i, s in enumerate(e.scope):
        if s not in computed:
            yield (
                f"scope[{i}]",
                f"{s!r} does not reach {e.target.service} through dependency edges; "
                f"scope may hold {', '.join(sorted(computed))}",
            )
    if e.log and e.log.service not in {e.target.service, *app.callers(e.target.service)}:
        yield (
            "log.service",
            (
                f"{e.log.service!r} is neither {e.target.service} nor a direct dependant of it "
                f"({', '.join(app.callers(e.target.service)) or 'none'})"
            ),
        )


def check_code(ctx: Context, e: Entry) -> Iterator[tuple[str, str]]:
    if not e.code or e.app not in ctx.app_names:
        return
    try:
        path = safe_path(ctx.workspace.root, e.code.patch, "patch")
        info = read_patch(path)
    except FaultkitError as err:
        yield "code.patch", str(err)
        return
    app = ctx.app(e.app)
    source = app.service_source(e.target.service) if e.target.service in app.service_names else None
    if source is None:
        yield (
            "code.patch",
            f"{e.target.service} has no source folder in {app.name}'s descriptor; a code fault needs one",
        )
        return
    outside = [f for f in info.files if not f.startswith(source + "/") or ".." in f.split("/")]
    if outside:
        yield "code.patch", f"touches files outside {source}/: {', '.join(outside)}"
    yield from (("code.patch", problem) for problem in patch_file_problems(path, source))
    if not any(e.code.marker in line for line in info.added):
        yield "code.marker", f"{e.code.marker!r} is not in any line the patch adds; pick text the patch introduces"


def check_config(ctx: Context, e: Entry) -> Iterator[tuple[str, str]]:
    if not e.config or e.app not in ctx.app_names:
        return
    c = e.config
    try:
        spec = find_container(ctx.manifests(ctx.app(e.app)), c.workload, c.container)
    except FaultkitError as err:
        yield "config.workload", str(err)
        return
    why = refusal(spec, c.field)
    if why:
        yield "config.field", why
        return
    current = get_field(spec, c.field)
    if current is None and c.kind != "cleared-value":
        yield "config.field", f"{c.field!r} is not written in the manifest of {c.workload}/{c.container}"
    elif current != c.old:
        yield "config.old", f"the manifest says {current!r}, the entry says {c.old!r}"
    if c.new == c.old:
        yield "config.new", "the new value equals the old one; the change changes nothing"
    mismatch = kind_mismatch(c.kind, c.field, c.old, c.new)
    if mismatch:
        yield "config.kind", mismatch


def check_direct(ctx: Context, e: Entry) -> Iterator[tuple[str, str]]:
    if not e.direct:
        return
    action = ACTIONS[e.direct.action]
    if e.level not in action.levels:
        yield "level", f"{action.name} acts at {', '.join(action.levels)} level, not {e.level}"
    known = {p.name: p for p in action.params}
    for key, value in e.direct.params.items():
        param = known.get(key)
        if param is None:
            yield f"direct.params.{key}", f"{action.name} takes no parameter {key!r}{suggest(key, list(known))}"
        elif not isinstance(value, param.type) or isinstance(value, bool):
            yield f"direct.params.{key}", f"expected {param.type.__name__}, found {value!r}"
        elif (param.minimum is not None and value < param.minimum) or (
            param.maximum is not None and value > param.maximum
        ):
            yield f"direct.params.{key}", f"{value} is outside {param.minimum}..{param.maximum}"


ENTRY_RULES: list[EntryRule] = [check_target, check_code, check_config, check_direct, check_leakage, check_title]
# rules that read an entry's admitting evidence, registered by the command layer (faultkit/labels/
# reads entries through catalog, so catalog cannot import it). Their findings are advice for the next
# validation (editing the entry makes its verdict stale), so --strict leaves them warnings.
EVIDENCE_RULES: list[EntryRule] = []
ADVISORY = ("declared_evidence",)


# -------------------------------------------------------------- catalog rules


def _repeats(items: list[Loaded], key: Callable[[Entry], object]) -> Iterator[tuple[Loaded, Loaded]]:
    """(later, first) for every entry whose key an earlier entry already has."""
    first: dict[object, Loaded] = {}
    for item in items:
        if item.entry:
            k = key(item.entry)
            if k in first:
                yield item, first[k]
            else:
                first[k] = item


def check_unique_ids(ctx: Context, items: list[Loaded]) -> Iterator[tuple[Loaded, str, str]]:
    for item, first in _repeats(items, lambda e: e.id):
        yield item, "id", f"id {item.entry.id!r} is already used by {first.file}"  # type: ignore[union-attr]


def check_duplicates(ctx: Context, items: list[Loaded]) -> Iterator[tuple[Loaded, str, str]]:
    for item, first in _repeats(items, lambda e: e.change_key):
        yield item, "(entry)", f"makes the same change to the same artifact as {first.file}; one of them must go"


def check_location(ctx: Context, items: list[Loaded]) -> Iterator[tuple[Loaded, str, str]]:
    for item in items:
        e = item.entry
        if e and item.file.startswith("catalog/") and item.file != f"catalog/{e.app}/{e.id}.yaml":
            yield item, "id", f"an entry with id {e.id!r} of app {e.app!r} belongs at catalog/{e.app}/{e.id}.yaml"


CATALOG_RULES: list[CatalogRule] = [check_unique_ids, check_duplicates, check_location, check_todo]
