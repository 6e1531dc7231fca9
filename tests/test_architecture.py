"""The shape of faultkit/: imports between its top-level packages run one way, and modules stay small.

The graph is read from the source (the AST of every module), so an import inside a function counts
as much as one at the top: a lazy import still ties the two packages together.
"""

from __future__ import annotations

import ast
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


def imported_modules(path: Path) -> set[str]:
    """Every faultkit module this file imports, wherever the import statement is."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
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
