"""`faultkit author code`: a real git working copy, a captured patch, a scaffolded entry."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml

from faultkit.catalog.lint import lint
from faultkit.workspace import Workspace

FILLED = {
    "title": "Cart line merge reads the stored quantity",
    "effect": "errors",
    "evidence.metrics[0]": "http_requests_total{service=cart,status=500}",
    "evidence.logs[0]": "KeyError",
    "code.update": "Merging a repeated product into an existing cart line logs the merge",
    "code.defect": "Assumes stored cart lines carry a 'qty' key; they carry 'quantity'",
    "code.requests[0]": "POST /cart/add for a product already in the cart",
    "log.message": "KeyError: 'qty'",
}


def _start(cli, entry_id: str = "minishop-cart-merge") -> Path:
    out = json.loads(cli("author", "code", "--app", "minishop", "--service", "cart", "--id", entry_id, "--json",
                         check=0).stdout)
    return Path(out["working_copy"])


def _edit_cart(wc: Path, comment: str = "") -> None:
    main = wc / "src" / "cart" / "main.py"
    text = main.read_text()
    old = 'item["quantity"] = min(MAX_QUANTITY, item["quantity"] + quantity)'
    assert old in text
    main.write_text(text.replace(old, f'{comment}item["quantity"] = min(MAX_QUANTITY, item["qty"] + quantity)\n'
                                      '            note_merge("line merged for repeat product")'))
    main.write_text(main.read_text() + '\n\ndef note_merge(text: str) -> None:\n    print(text)\n')


def _fill(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    for key, value in FILLED.items():
        node, *rest = key.replace("[0]", ".0").split(".")
        target = data
        parts = [node, *rest]
        for p in parts[:-1]:
            target = target[int(p)] if p.isdigit() else target[p]
        last = parts[-1]
        if last.isdigit():
            target[int(last)] = value
        else:
            target[last] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_round_trip_patch_applies_and_lints_after_filling(ws: Workspace, cli) -> None:
    wc = _start(cli)
    assert (wc / "src" / "cart" / "main.py").is_file() and (wc / "src" / "shoplib").is_dir()
    assert not list(wc.rglob("__pycache__")) and not list(wc.rglob(".ruff_cache"))
    _edit_cart(wc)
    done = json.loads(cli("author", "code", "--finish", "minishop-cart-merge", "--json", check=0).stdout)
    assert done["files"] == ["src/cart/main.py"]
    assert done["marker"] == "line merged for repeat product"
    patch = ws.root / done["patch"]
    text = patch.read_text()
    assert "--- a/src/cart/main.py" in text and "+++ b/src/cart/main.py" in text

    # the validator applies the patch with `git apply` inside a copy of apps/minishop
    copy = ws.root.parent / "applied"
    shutil.copytree(ws.apps_dir / "minishop", copy)
    subprocess.run(["git", "apply", str(patch)], cwd=copy, check=True, capture_output=True)
    assert 'item["qty"]' in (copy / "src" / "cart" / "main.py").read_text()

    entry = ws.root / done["entry"]
    data = yaml.safe_load(entry.read_text())
    assert data["target"] == {"service": "cart", "workload": "cart", "container": "cart"}
    assert data["artifact"]["ref"] == "src/cart/main.py" and "main.py" in data["artifact"]["aliases"]
    assert data["artifact_check"] == {"kind": "build", "service": "cart", "absent_marker": done["marker"]}
    assert data["probe"]["service"] == "frontend" and "checkout" in data["scope"]

    report = lint(ws, [entry])
    flagged = {f.path for f in report.findings}
    assert report.errors and flagged == set(FILLED)  # only the placeholders are flagged
    assert all(f.rule in ("todo", "schema") for f in report.findings)

    _fill(entry)
    report = lint(ws, [entry])
    assert report.errors == 0, [f.render() for f in report.findings]
    assert cli("catalog", "lint", str(entry)).returncode == 0


def test_the_artifact_is_the_changed_source_even_when_its_tests_changed_more(ws: Workspace, cli) -> None:
    wc = _start(cli, "minishop-cart-merge-tested")
    _edit_cart(wc)
    tests = wc / "src" / "cart" / "tests"
    extra = "".join(f"\n\ndef test_added_{i}():\n    assert {i} == {i}\n" for i in range(5))
    test_file = sorted(tests.glob("test_*.py"))[0]
    test_file.write_text(test_file.read_text() + extra)
    done = json.loads(cli("author", "code", "--finish", "minishop-cart-merge-tested", "--json", check=0).stdout)
    assert done["files"] == sorted(["src/cart/main.py", f"src/cart/tests/{test_file.name}"])
    data = yaml.safe_load((ws.root / done["entry"]).read_text())
    assert data["artifact"]["ref"] == "src/cart/main.py"


def test_edits_outside_the_service_are_refused_and_nothing_written(ws: Workspace, cli) -> None:
    wc = _start(cli, "minishop-cart-wide")
    _edit_cart(wc)
    shared = wc / "src" / "shoplib" / "http.py"
    shared.write_text(shared.read_text() + "\n# tuned\n")
    (wc / "README.md").write_text("notes\n")
    proc = cli("author", "code", "--finish", "minishop-cart-wide")
    assert proc.returncode == 1
    assert "only files under src/cart/ may change" in proc.stderr
    assert "src/shoplib/http.py" in proc.stderr and "README.md" in proc.stderr
    assert not (ws.patches_dir / "minishop" / "minishop-cart-wide.diff").exists()
    assert not (ws.catalog_dir / "minishop" / "minishop-cart-wide.yaml").exists()


def test_no_change_and_unknown_session_and_existing_id_are_refused(ws: Workspace, cli) -> None:
    _start(cli, "minishop-cart-same")
    proc = cli("author", "code", "--finish", "minishop-cart-same")
    assert proc.returncode == 1 and "nothing changed" in proc.stderr
    proc = cli("author", "code", "--finish", "minishop-nope")
    assert proc.returncode == 2 and "no working copy" in proc.stderr
    proc = cli("author", "code", "--app", "minishop", "--service", "cart", "--id", "minishop-cart-same")
    assert proc.returncode == 2 and "--discard" in proc.stderr
    cli("author", "code", "--discard", "minishop-cart-same", check=0)
    proc = cli("author", "code", "--app", "minishop", "--service", "nosuch", "--id", "minishop-x-y")
    assert proc.returncode == 1 and "not a service" in proc.stderr


def test_leaky_comment_in_patch_is_flagged_by_lint(ws: Workspace, cli) -> None:
    wc = _start(cli, "minishop-cart-leaky")
    _edit_cart(wc, comment="# inject the fault here\n            ")
    proc = cli("author", "code", "--finish", "minishop-cart-leaky", check=0)
    assert "gives the fault away" in proc.stderr  # warned at once
    entry = ws.catalog_dir / "minishop" / "minishop-cart-leaky.yaml"
    _fill(entry)
    findings = [f for f in lint(ws, [entry]).findings if f.rule == "leakage"]
    assert findings and findings[0].path == "code.patch"
    assert {"'fault'", "'inject'"} <= {m for f in findings for m in f.message.split() if m.startswith("'")}
