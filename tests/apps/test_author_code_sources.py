"""`faultkit author code` where the source is not under the app folder: a fresh repository with an
empty source folder, a descriptor whose source lies outside the app folder, and `--source DIR`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml

from faultkit.scaffold import init
from tests.helpers.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
MINISHOP = REPO / "apps" / "minishop"


def _faultkit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def _catalog(tmp_path: Path, source: str, copy_source: bool) -> Path:
    """A fresh catalog (no commit yet) holding minishop's descriptor and manifests, source set to `source`."""
    root = tmp_path / "catalog"
    init(root)
    app = root / "apps" / "minishop"
    shutil.copytree(MINISHOP / "manifests", app / "manifests")
    data = yaml.safe_load((MINISHOP / "app.yaml").read_text())
    data["source"] = source
    (app / "app.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    if copy_source:
        shutil.copytree(MINISHOP / "src", (app / source).resolve(),
                        ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
    return root


def _edit_and_finish(root: Path, edit: Path, entry_id: str) -> dict:
    main = edit / "main.py"
    main.write_text(main.read_text() + '\n\ndef describe() -> str:\n    return "cart lines merged by sku"\n')
    done = _faultkit(root, "author", "code", "--finish", entry_id, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_fresh_repository_with_an_empty_source_folder_gets_a_clear_error(tmp_path: Path) -> None:
    root = _catalog(tmp_path, "src", copy_source=False)
    for folder in ("src/cart", "src/shoplib"):
        (root / "apps/minishop" / folder).mkdir(parents=True)
    proc = _faultkit(root, "author", "code", "--app", "minishop", "--service", "cart", "--id", "minishop-cart-a")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "unexpected" not in proc.stderr
    assert "no source files to author on" in proc.stderr and "--source DIR" in proc.stderr
    assert not (root / ".faultkit/authoring/minishop-cart-a").exists()  # nothing half made


def test_source_outside_the_app_folder(tmp_path: Path) -> None:
    root = _catalog(tmp_path, "../../upstream-src", copy_source=True)
    start = _faultkit(root, "author", "code", "--app", "minishop", "--service", "cart", "--id", "minishop-cart-b",
                      "--json")
    assert start.returncode == 0, start.stderr
    info = json.loads(start.stdout)
    assert Path(info["edit"]) == Path(info["working_copy"]) / "cart"  # relative to the source root
    assert info["checks"][1][-1] == "tests"  # the descriptor's own test command
    out = _edit_and_finish(root, Path(info["edit"]), "minishop-cart-b")
    assert out["files"] == ["cart/main.py"]
    patch = root / out["patch"]
    check = subprocess.run(["git", "apply", "--check", str(patch)], cwd=root / "upstream-src",
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr  # applies at the root of the user's checkout


def test_source_dir_option_against_a_checkout(tmp_path: Path) -> None:
    root = _catalog(tmp_path, "src", copy_source=False)
    checkout = tmp_path / "checkout"
    shutil.copytree(MINISHOP / "src", checkout, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
    missing = _faultkit(root, "author", "code", "--app", "minishop", "--service", "cart", "--id", "minishop-cart-c")
    assert missing.returncode == 1 and "--source DIR" in missing.stderr
    start = _faultkit(root, "author", "code", "--app", "minishop", "--service", "cart", "--id", "minishop-cart-c",
                      "--source", str(checkout), "--json")
    assert start.returncode == 0, start.stderr
    edit = Path(json.loads(start.stdout)["edit"])
    assert (edit / "main.py").read_bytes() == (checkout / "cart" / "main.py").read_bytes()
    assert (edit.parent / "shoplib").is_dir()  # the common folders come along
    out = _edit_and_finish(root, edit, "minishop-cart-c")
    # named from the app folder, as the descriptor's source is (src), where the validator applies it
    assert out["files"] == ["src/cart/main.py"] and (root / out["entry"]).is_file()
    app_folder = tmp_path / "app-folder"
    shutil.copytree(checkout, app_folder / "src")
    check = subprocess.run(["git", "apply", "--check", str(root / out["patch"])], cwd=app_folder,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    entry = yaml.safe_load((root / out["entry"]).read_text())
    assert entry["artifact"]["ref"] == "src/cart/main.py"


def test_source_linked_into_the_app_folder_is_patched_from_the_app_folder(tmp_path: Path) -> None:
    """An upstream checkout linked in as the app's source folder (as Bank of Anthos' walkthrough
    does): the patch names src/..., which the catalog's lint accepts and the validator applies."""
    root = _catalog(tmp_path, "src", copy_source=False)
    checkout = tmp_path / "upstream"
    shutil.copytree(MINISHOP / "src", checkout, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
    (root / "apps/minishop/src").symlink_to(checkout)
    start = _faultkit(root, "author", "code", "--app", "minishop", "--service", "cart", "--id", "minishop-cart-e",
                      "--json")
    assert start.returncode == 0, start.stderr
    out = _edit_and_finish(root, Path(json.loads(start.stdout)["edit"]), "minishop-cart-e")
    assert out["files"] == ["src/cart/main.py"]
    lint = _faultkit(root, "catalog", "lint", out["entry"])
    assert "outside src/cart/" not in lint.stdout + lint.stderr


def test_source_folder_leading_out_of_the_source_root_is_refused(tmp_path: Path) -> None:
    root = _catalog(tmp_path, "src", copy_source=True)
    app = root / "apps/minishop/app.yaml"
    data = yaml.safe_load(app.read_text())
    data["common"] = ["../../../etc"]
    app.write_text(yaml.safe_dump(data, sort_keys=False))
    proc = _faultkit(root, "author", "code", "--app", "minishop", "--service", "cart", "--id", "minishop-cart-d")
    assert proc.returncode == 1 and "leads outside" in proc.stderr
