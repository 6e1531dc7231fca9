"""Names that become paths cannot lead a write out of the repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from faultkit.schedules import synthetic
from tests.hostile.refusal import assert_clean

MANIFEST = Path(__file__).resolve().parent.parent / "fixtures" / "manifests" / "boutique.yaml"


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


@pytest.mark.parametrize("name", ["../x", "../../escaped", "/abs/path", "x\n", "x/y", "..", ".hidden", "a..b",
                                  "x\\y", "", "x" * 200, "[/red]"])
def test_apps_import_name_cannot_become_a_path_outside(ws, run, tmp_path, name):
    before = files_under(tmp_path)
    proc = run("apps", "import", "--name", name, str(MANIFEST))
    assert_clean(proc, 2, "--name")
    assert files_under(tmp_path) == before
    assert not Path("/abs").exists()
    assert sorted(p.name for p in ws.apps_dir.iterdir()) == ["minishop"]


def test_apps_import_through_a_symlinked_app_folder_is_refused(ws, run, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ws.apps_dir / "boutique")
    assert_clean(run("apps", "import", "--name", "boutique", str(MANIFEST)), 1, "leads outside")
    assert list(outside.iterdir()) == []


def test_apps_import_into_a_planted_manifest_symlink_is_refused(ws, run, tmp_path):
    victim = tmp_path / "victim.yaml"
    victim.write_text("keep me\n")
    (ws.apps_dir / "boutique" / "manifests").mkdir(parents=True)
    os.symlink(victim, ws.apps_dir / "boutique" / "manifests" / "boutique.yaml")
    proc = run("apps", "import", "--name", "boutique", str(MANIFEST))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert victim.read_text() == "keep me\n"


def write_release(path: Path, app: str) -> Path:
    entries = synthetic.entries(app, 11, 20, ("code-bug", "dependency"))
    path.write_text(json.dumps(synthetic.release("1.0.0", entries)))
    return path


@pytest.mark.parametrize("app", ["../../evil", "/tmp/evil", "evil\n", "x/../../y"])
def test_schedule_export_with_an_app_name_from_a_release_stays_inside(ws, run, tmp_path, app):
    release = write_release(tmp_path / "catalog-1.0.0.json", app)
    before = files_under(tmp_path)
    proc = run("schedule", "export", "--app", app, "--seed", "1", "--release", str(release))
    assert_clean(proc, 2, "--app")
    assert files_under(tmp_path) == before and list(ws.schedules_dir.iterdir()) == []


def test_schedule_export_through_a_symlinked_schedules_folder_is_refused(ws, run, tmp_path):
    release = write_release(tmp_path / "catalog-1.0.0.json", "shop")
    outside = tmp_path / "outside"
    outside.mkdir()
    ws.schedules_dir.rmdir()
    os.symlink(outside, ws.schedules_dir)
    proc = run("schedule", "export", "--app", "shop", "--seed", "1", "--release", str(release))
    assert_clean(proc, 1, "leads outside")
    assert list(outside.iterdir()) == []


def test_schedule_export_into_a_folder_the_user_named_is_allowed(ws, run, tmp_path):
    release = write_release(tmp_path / "catalog-1.0.0.json", "shop")
    out = tmp_path / "mine" / "s.json"
    proc = run("schedule", "export", "--app", "shop", "--seed", "1", "--release", str(release), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()


@pytest.mark.parametrize("version", ["1\n", "../x", "a/b", "..", "1..2"])
def test_release_version_cannot_become_a_path(ws, run, version):
    assert_clean(run("catalog", "build", "--version", version), 2, "--version")
    assert not ws.dist_dir.exists()


@pytest.mark.parametrize("fault_id", ["ms-cart-x\n", "../../ms-cart-x", "ms/cart", "MS-CART"])
def test_author_ids_cannot_become_paths(ws, run, fault_id):
    proc = run("author", "direct", "--app", "minishop", "--service", "cart", "--action", "network-delay",
               "--param", "ms=750", "--id", fault_id)
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("Error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert list((ws.catalog_dir / "minishop").iterdir()) == []


@pytest.mark.parametrize("app", ["../minishop", "minishop\n", "/etc"])
def test_author_app_names_cannot_become_paths(ws, run, app):
    proc = run("author", "direct", "--app", app, "--service", "cart", "--action", "network-delay", "--param", "ms=750")
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("Error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_an_entry_id_with_a_trailing_newline_is_refused_by_lint(ws, run):
    from tests.factories import entry_data, write_entry

    write_entry(ws, entry_data(id="ms-cart-store-port\n"), name="ms-cart-store-port.yaml")
    proc = run("catalog", "lint")
    assert proc.returncode == 1 and "id: 'ms-cart-store-port\\n' does not match" in proc.stdout, proc.stdout
