"""The shape of faultkit/: imports run one way, between packages and between any two modules, and
modules stay small.

The graph is read from the source (the AST of every module), so an import inside a function counts
as much as one at the top: a lazy import still ties the two modules together, it only hides the
cycle from the interpreter. So do `importlib.import_module("faultkit.x")` with a literal name and a
lazy table's "faultkit.x:attribute" strings (cli.py, catalog_cmds.py), which are imports by name.
What does not count: an import under `if TYPE_CHECKING:` (never executed, it exists for the type
checker only), and for `from faultkit.p import sub` where `sub` is a module, the package `p`
itself (the edge goes to `p.sub`; `p/__init__.py` re-exporting its own modules is not a cycle).
"""

from __future__ import annotations

import ast
import functools
import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "faultkit"
MAX_LINES = 400


def unit_of(module: str) -> str:
    """The top-level package a dotted module name belongs to ("faultkit.catalog.lint" -> "catalog");
    a top-level module (faultkit/errors.py) is a unit of its own."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _from_target(node: ast.ImportFrom, package: str) -> str:
    """The module a `from X import ...` names, a relative one resolved against `package`."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(path: Path) -> set[str]:
    """Every faultkit module this file imports, wherever the import statement is."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(node, package)
            found.add(target)
            # `from faultkit import errors` imports the module faultkit.errors
            found.update(f"{target}.{a.name}" for a in node.names if (ROOT.parent / target.replace(".", "/")
                                                                        / f"{a.name}.py").is_file())
    return {m for m in found if m == "faultkit" or m.startswith("faultkit.")}


def package_graph() -> dict[str, dict[str, list[str]]]:
    """unit -> {unit it imports: [the modules whose imports make the edge]}."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        source = module_name(path)
        a = unit_of(source)
        graph.setdefault(a, {})
        for target in imported_modules(path):
            b = unit_of(target)
            if b and a and b != a:  # the package's own modules, and the faultkit root (__version__), aside
                graph[a].setdefault(b, []).append(f"{source} -> {target}")
    return graph


def test_no_import_cycle_between_packages() -> None:
    graph = package_graph()
    try:
        tuple(TopologicalSorter({a: set(b) for a, b in graph.items()}).static_order())
    except CycleError as e:
        cycle = e.args[1][::-1]  # graphlib lists each node before the one that imports it
        edges = [f"  {x} -> {y}: " + "; ".join(sorted(graph[x][y])[:3]) for x, y in zip(cycle, cycle[1:], strict=False)]
        raise AssertionError("import cycle between faultkit packages: " + " -> ".join(cycle) + "\n"
                             + "\n".join(edges)) from None


def test_the_graph_sees_imports_inside_functions() -> None:
    """The check would be blind if it missed lazy imports: the commands import the core lazily."""
    graph = package_graph()
    assert "validators" in graph["gate"], "gate/core.py imports faultkit.validators.pipeline inside a function"
    assert "commands" not in {b for edges in graph.values() for b in edges}, "nothing imports the command layer"


LAZY = re.compile(r"faultkit(\.\w+)+:\w+")  # "module:attribute" in a table of lazily imported commands


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` blocks."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _is_module(name: str) -> bool:
    base = ROOT.parent / name.replace(".", "/")
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def module_edges(path: Path) -> set[str]:
    """The faultkit modules this file's executed imports load (see the module docstring for what counts)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip = _type_checking_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(node, package)
            subs = {f"{target}.{a.name}" for a in node.names if _is_module(f"{target}.{a.name}")}
            found.update(subs)
            if len(subs) < len(node.names):  # some name is the package's own attribute: its __init__ runs for it
                found.add(target)
        elif (isinstance(node, ast.Call) and ast.unparse(node.func) in ("importlib.import_module", "import_module")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and LAZY.fullmatch(node.value):
            found.add(node.value.partition(":")[0])
    return {m for m in found if m.startswith("faultkit.") and m != name and _is_module(m)}


@functools.cache
def module_graph() -> dict[str, set[str]]:
    return {module_name(path): module_edges(path) for path in sorted(ROOT.rglob("*.py"))}


def test_no_import_cycle_between_any_two_modules() -> None:
    graph = module_graph()
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as e:
        cycle = e.args[1][::-1]
        raise AssertionError("import cycle between faultkit modules: " + " -> ".join(cycle)) from None


def test_the_module_graph_sees_lazy_and_dynamic_imports() -> None:
    graph = module_graph()
    # imported inside a function, and by name from a lazy table of commands
    assert "faultkit.validators.pipeline" in graph["faultkit.gate.core"]
    assert "faultkit.commands.release_cmds" in graph["faultkit.commands.catalog_cmds"]
    assert "faultkit.commands.platform_cmds" in graph["faultkit.cli"]
    # not what only the type checker reads: schema.py names yamlio's types under TYPE_CHECKING only
    assert "faultkit.yamlio" not in graph["faultkit.schema"]


def test_the_platforms_do_not_import_each_other() -> None:
    """Whatever both need lives beside them in faultkit/platforms/ (params.py, logline.py, base.py)."""
    graph = module_graph()
    for a, b in (("local", "kubernetes"), ("kubernetes", "local")):
        sideways = {f"{m} -> {t}" for m, targets in graph.items() if m.startswith(f"faultkit.platforms.{a}")
                    for t in targets if t.startswith(f"faultkit.platforms.{b}")}
        assert not sideways, sideways


NAMES = {"local", "kubernetes", "docker"}


def _strings(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_strings(e) for e in node.elts))
    return set()


def test_no_branch_on_a_platform_name_outside_the_platforms() -> None:
    """`x == "kubernetes"`, `name in ("local", ...)`, `case "local":`, a dict keyed by platform names:
    outside faultkit/platforms/ code asks the protocol or the options' class attributes instead."""
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.relative_to(ROOT).parts[0] == "platforms":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names: set[str] = set()
            if isinstance(node, ast.Compare):
                names = _strings(node.left).union(*(_strings(c) for c in node.comparators))
            elif isinstance(node, ast.MatchValue):
                names = _strings(node.value)
            elif isinstance(node, ast.Dict):
                names = set().union(*(_strings(k) for k in node.keys if k is not None))
            if names & NAMES:
                offenders.append(f"{path.relative_to(ROOT.parent)}:{getattr(node, 'lineno', '?')}: {ast.unparse(node)}")
    assert not offenders, "branches on a platform's name:\n" + "\n".join(offenders)


def test_no_module_over_400_lines() -> None:
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            offenders.append(f"{path.relative_to(ROOT.parent)}: {lines} lines")
    assert not offenders, f"modules over {MAX_LINES} lines (split them by job):\n" + "\n".join(offenders)


def test_no_two_public_classes_share_a_name() -> None:
    """A name means one thing across faultkit/: `Params` or `Candidate` in two packages are two concepts."""
    homes: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                homes.setdefault(node.name, []).append(module_name(path))
    shared = {name: where for name, where in homes.items() if len(where) > 1}
    assert not shared, shared
