"""The shape of faultkit/platforms: small modules whose imports run one way."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PLATFORMS = Path(__file__).resolve().parents[2] / "faultkit" / "platforms"
PACKAGE_ROOT = PLATFORMS.parents[1]
# the supervisor's side: the client reaches it only through the control API
CONTROLLERS = {"supervisor", "daemon", "kubelet", "proxy", "rollouts"}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


_MODULES = {_module(p) for p in PLATFORMS.rglob("*.py")}


def _imports(path: Path) -> set[str]:
    """The faultkit.platforms modules `path` imports, TYPE_CHECKING imports included."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            # `from pkg import submodule` imports the submodule (the package's __init__ runs first
            # either way, as it does for every import below it, so that edge is not counted)
            submodules = {f"{node.module}.{a.name}" for a in node.names} & _MODULES
            out |= submodules or {node.module}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return (out & _MODULES) - {_module(path)}


def _graph() -> dict[str, set[str]]:
    return {_module(p): _imports(p) for p in sorted(PLATFORMS.rglob("*.py"))}


def test_imports_inside_platforms_have_no_cycle() -> None:
    graph = _graph()
    assert "faultkit.platforms.local.kubelet" in graph["faultkit.platforms.local.supervisor"]
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as e:
        raise AssertionError(f"import cycle (each imports the next): {' -> '.join(reversed(e.args[1]))}") from None
    assert len(order) == len(graph)


def test_the_client_does_not_import_the_supervisor_side() -> None:
    deps = _graph()["faultkit.platforms.local.platform"]
    assert not {d.rsplit(".", 1)[1] for d in deps} & CONTROLLERS


def test_no_module_in_platforms_is_over_400_lines() -> None:
    sizes = {p.relative_to(PLATFORMS).as_posix(): len(p.read_text().splitlines()) for p in PLATFORMS.rglob("*.py")}
    assert sizes and not {name: n for name, n in sizes.items() if n > 400}
