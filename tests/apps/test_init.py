"""`faultkit init`: a new user's catalog repository, then import, lint and candidates in it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import git
import yaml

from faultkit.scaffold import init
from tests.helpers.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "manifests"


def _faultkit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def test_packaged_templates_are_this_repositorys_own() -> None:
    templates = REPO / "faultkit" / "templates"
    assert (templates / "faultkit-gate.yml").read_text() == (REPO / ".github/workflows/faultkit-gate.yml").read_text()
    assert (templates / "pre-commit-hooks.yaml").read_text() == (REPO / ".pre-commit-hooks.yaml").read_text()
    assert (templates / "gate-kubernetes.sh").read_text() == (REPO / "scripts/ci/gate-kubernetes.sh").read_text()


def test_init_then_import_lint_and_candidates(tmp_path: Path) -> None:
    root = tmp_path / "my-catalog"
    outside = _faultkit(tmp_path, "apps", "list")
    assert outside.returncode == 2 and "faultkit init" in outside.stderr

    made = _faultkit(tmp_path, "init", "my-catalog")
    assert made.returncode == 0, made.stderr
    for rel in ("apps", "catalog", "patches", "faultkit.toml", ".gitignore", ".github/workflows/faultkit-gate.yml",
                ".pre-commit-config.yaml", "scripts/ci/gate-kubernetes.sh"):
        assert (root / rel).exists(), rel
    assert not git.Repo(root).head.is_valid()  # a fresh repository with no commit yet
    workflow = yaml.safe_load((root / ".github/workflows/faultkit-gate.yml").read_text())
    steps = [s.get("run", "") for s in workflow["jobs"]["gate"]["steps"]]
    assert any(s.startswith('pip install "faultkit==') for s in steps) and any("faultkit gate" in s for s in steps)
    hooks = yaml.safe_load((root / ".pre-commit-config.yaml").read_text())["repos"][0]
    assert hooks["repo"] == "local" and hooks["hooks"][0]["id"] == "faultkit-lint"
    assert hooks["hooks"][0]["entry"] == "faultkit catalog lint"

    imported = _faultkit(root, "apps", "import", "--name", "boutique", str(FIXTURES / "boutique.yaml"))
    assert imported.returncode == 0, imported.stderr
    assert (root / "apps/boutique/app.yaml").is_file()
    assert _faultkit(root, "catalog", "lint").returncode == 0
    cands = _faultkit(root, "author", "candidates", "--app", "boutique", "--write")
    assert cands.returncode == 0, cands.stderr
    written = sorted((root / "catalog/boutique").glob("*.yaml"))
    assert len(written) > 20
    lint = _faultkit(root, "catalog", "lint")
    # candidates are drafts whose observations (effect, log message) a validation fills in
    assert lint.returncode == 1 and "still a placeholder" in lint.stdout + lint.stderr
    assert "Traceback" not in lint.stderr


def test_init_refuses_an_existing_catalog_and_keeps_existing_files(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo/.gitignore").write_text("mine\n")
    made = init(tmp_path / "repo")
    assert ".gitignore" in made.kept and (tmp_path / "repo/.gitignore").read_text() == "mine\n"
    again = _faultkit(tmp_path, "init", "repo")
    assert again.returncode == 1 and "already a faultkit catalog repository" in again.stderr
    assert "Traceback" not in again.stderr
    (tmp_path / "file").write_text("x")
    assert "not a folder" in _faultkit(tmp_path, "init", "file").stderr
