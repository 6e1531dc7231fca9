"""A base install (`pip install faultkit`, no extras) answers every --help, and a command that needs
an optional library says in one line which extra to install (issue 29).

The test makes a fresh virtual environment and installs a copy of this checkout's package into it
(pyproject.toml, README.md and faultkit/, so nothing is built inside the checkout); the base
dependencies come through pip as a user's would. It takes 20 to 80 s (pip, on a busy machine).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# walks the click tree inside the venv: every command and subcommand's --help, by path, with its exit code
WALK = """
import contextlib, io, json
import click
from faultkit.cli import COMMANDS, main, main_group
out = {}
def visit(path, command):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main([*path, "--help"])
    out[" ".join(path)] = [code, err.getvalue().strip()]
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            visit([*path, name], command.get_command(ctx, name))
for name in sorted(COMMANDS):
    visit([name], main_group.get_command(click.Context(main_group), name))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("base-install")
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "faultkit", source / "faultkit", ignore=shutil.ignore_patterns("__pycache__"))
    env_dir = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=120)
    pip = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          str(source)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return env_dir


def run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run([str(venv / "bin" / "faultkit"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_base_install_has_no_optional_library(venv: Path) -> None:
    for module in ("kubernetes", "docker"):
        proc = subprocess.run([str(venv / "bin" / "python"), "-c", f"import {module}"], capture_output=True, text=True)
        assert proc.returncode == 1 and "ModuleNotFoundError" in proc.stderr, module


def test_every_help_works_without_the_extras(venv: Path, tmp_path: Path) -> None:
    top = run(venv, "--help", cwd=tmp_path)
    assert top.returncode == 0, top.stderr
    assert "validate" in top.stdout
    walk = subprocess.run([str(venv / "bin" / "python"), "-c", WALK], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert walk.returncode == 0, walk.stderr
    helps = json.loads(walk.stdout)
    assert {"campaign render", "schedule run", "status", "up", "validate"} <= set(helps)
    failed = {path: err for path, (code, err) in helps.items() if code != 0}
    assert not failed, failed


@pytest.mark.parametrize("args", [("status", "--platform", "kubernetes"),
                                  ("campaign", "render", "--app", "minishop", "--workers", "1", "--image", "x")])
def test_a_command_needing_kubernetes_names_the_extra(venv: Path, tmp_path: Path, args: tuple[str, ...]) -> None:
    made = run(venv, "init", "repo", cwd=tmp_path)  # a catalog repository, as a new user starts one
    assert made.returncode == 0, made.stderr
    proc = run(venv, *args, cwd=tmp_path / "repo")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "pip install 'faultkit[kubernetes]'" in lines[0]
    assert "Traceback" not in proc.stderr and "unexpected" not in proc.stderr
