"""A verdict's source binding is what every checkout of the catalog can recompute: the source tree
where the repository holds it, an upstream app's pin where the source is the user's own checkout."""

from __future__ import annotations

from pathlib import Path

import yaml

from faultkit.apps.descriptor import load_app
from faultkit.catalog.bindings import source_digest
from faultkit.workspace import Workspace
from tests.helpers.cli import run_cli


def _app(ws: Workspace, tmp_path: Path, upstream: bool) -> None:
    manifest = tmp_path / "bank.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                                        "spec": {"template": {"spec": {"containers": [{"name": "web"}]}}}}))
    pin = ["--upstream", "example/bank@v1"] if upstream else []
    run_cli("apps", "import", "--name", "bank", *pin, str(manifest), cwd=ws.root, check=0)
    descriptor = ws.apps_dir / "bank" / "app.yaml"
    data = yaml.safe_load(descriptor.read_text())
    data["source"] = "src"
    data["services"][0]["source"] = "web"
    descriptor.write_text(yaml.safe_dump(data, sort_keys=False))


def test_an_upstream_apps_source_in_the_users_checkout_is_bound_by_its_pin(ws: Workspace, tmp_path: Path) -> None:
    _app(ws, tmp_path, upstream=True)
    checkout = tmp_path / "checkout"
    (checkout / "web").mkdir(parents=True)
    (checkout / "web" / "app.py").write_text("print('hi')\n")
    app_root = ws.apps_dir / "bank"
    assert source_digest(load_app(ws, "bank"), "web").startswith("upstream:")  # no checkout at hand
    (app_root / "src").symlink_to(checkout)
    linked = source_digest(load_app(ws, "bank"), "web")
    assert linked.startswith("upstream:")  # the same wherever the checkout is, or whether it is there
    (app_root / "src").unlink()
    (app_root / "src" / "web").mkdir(parents=True)
    (app_root / "src" / "web" / "app.py").write_text("print('hi')\n")
    assert source_digest(load_app(ws, "bank"), "web").startswith("tree:")  # held here: its files count


def test_an_apps_own_source_is_bound_by_its_tree_even_when_linked(ws: Workspace, tmp_path: Path) -> None:
    _app(ws, tmp_path, upstream=False)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "web").mkdir(parents=True)
    (elsewhere / "web" / "app.py").write_text("print('hi')\n")
    (ws.apps_dir / "bank" / "src").symlink_to(elsewhere)
    assert source_digest(load_app(ws, "bank"), "web").startswith("tree:")
