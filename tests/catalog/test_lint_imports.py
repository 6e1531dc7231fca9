"""Imports run one way (issue 12) and the lint path imports only what it uses (issue 20)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from tests.factories import port_entry, write_entry

PACKAGE = Path(__file__).resolve().parents[2] / "faultkit"
# what a lint answered from its cache must not import (the rules, YAML, the schema check, the app model)
WARM_FREE = ("yaml", "fastjsonschema", "faultkit.apps.descriptor", "faultkit.catalog.model", "unidiff")
# what no lint of valid entries imports (jsonschema only explains an invalid document)
NEVER = ("jsonschema", "rich", "git", "faultkit.validators.pipeline")


def hits(modules: set[str], names: tuple[str, ...]) -> set[str]:
    return {m for m in modules if m in names or m.split(".")[0] in names}


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_catalog_and_gate_never_import_authoring():
    """authoring builds on catalog (it lints what it writes); the reverse would be a cycle."""
    for folder in ("catalog", "gate"):
        for path in (PACKAGE / folder).rglob("*.py"):
            upward = {m for m in imported(path) if m.startswith(("faultkit.authoring", "faultkit.commands"))}
            assert not upward, f"{path.relative_to(PACKAGE)} imports {sorted(upward)}"


def test_the_rules_import_nothing_above_the_catalog():
    for path in (PACKAGE / "catalog" / "rules").glob("*.py"):
        above = {m for m in imported(path) if m.startswith(("faultkit.gate", "faultkit.validators", "faultkit.report"))}
        assert not above, f"{path.relative_to(PACKAGE)} imports {sorted(above)}"


def _modules_after_lint(ws) -> set[str]:
    code = ("import json, sys\nfrom faultkit.cli import main\ncode = main(['catalog', 'lint'])\n"
            "print(json.dumps([code, sorted(sys.modules)]))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ws.root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    status, modules = json.loads(proc.stdout.strip().splitlines()[-1])
    assert status == 0, proc.stdout
    return set(modules)


def test_lint_imports_only_what_it_uses(ws):
    for i in range(3):
        write_entry(ws, port_entry(i))
    cold = _modules_after_lint(ws)
    assert not hits(cold, NEVER), f"a cold lint imported {sorted(hits(cold, NEVER))}"
    assert "yaml" in cold, "the cold run did parse the entries"
    unused = hits(_modules_after_lint(ws), WARM_FREE + NEVER)
    assert not unused, f"a lint answered from its cache imported {sorted(unused)}"
