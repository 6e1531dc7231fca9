"""Files that crashed or hung faultkit (issue 32): each is now a one-line error naming the file,
in seconds, never "Error: unexpected ..." and never a hang."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.factories import cart_prefix_entry, entry_data, write_entry
from tests.hostile.refusal import assert_clean

MANIFEST = str(Path(__file__).resolve().parent.parent / "fixtures" / "manifests" / "boutique.yaml")


def test_a_self_symlinked_patch_is_a_finding_not_a_crash(ws, run):
    os.symlink("ms-cart-prefix.diff", ws.patches_dir / "minishop" / "ms-cart-prefix.diff")
    write_entry(ws, {k: v for k, v in cart_prefix_entry().items() if v is not None})
    proc = run("catalog", "lint")
    assert proc.returncode == 1 and "unexpected" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "patch patches/minishop/ms-cart-prefix.diff" not in proc.stderr
    assert any("code.patch" in line and "ms-cart-prefix.diff" in line and "symlink loop" in line
               for line in proc.stdout.splitlines()), proc.stdout


NESTED = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
# (name, command, faultkit.toml, what the refusal says); build reads [trust] and [validator], lint [leakage]
TOML_CASES = [
    ("nested-100000-build", ("catalog", "build"), NESTED, "nesting too deep"),
    ("nested-100000-lint", ("catalog", "lint"), NESTED, "nesting too deep"),
    ("trust-array-of-tables", ("catalog", "build"), '[[trust]]\nkeys = ["ed25519:00"]\n',
     "[trust] must be a table, found an array of tables"),
    ("validator-array-of-tables", ("catalog", "build"), '[[validator]]\nkey = "x"\n', "[validator] must be a table"),
    ("trust-a-string", ("catalog", "build"), 'trust = "all"\n', "[trust] must be a table, found str"),
    ("leakage-array-of-tables", ("catalog", "lint"), '[[leakage]]\nextra = ["x"]\n', "[leakage] must be a table"),
]


@pytest.mark.parametrize("name,command,text,needle", TOML_CASES, ids=[c[0] for c in TOML_CASES])
def test_a_hostile_faultkit_toml_is_one_line(ws, run, name, command, text, needle):
    write_entry(ws, entry_data())
    (ws.root / "faultkit.toml").write_text(text)
    start = time.monotonic()
    refused(run(*command), "faultkit.toml", needle)
    assert time.monotonic() - start < 30


def refused(proc, *needles: str) -> None:  # type: ignore[no-untyped-def]
    """build stops with one line; lint reports the file as a finding of each rule that reads it."""
    if proc.args[3:5] != ["catalog", "lint"]:
        assert_clean(proc, 1, *needles)
        return
    assert proc.returncode == 1 and not proc.stderr, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if all(n in line for n in needles)]
    assert lines and all(line.startswith("error catalog/minishop/") for line in lines), proc.stdout


@pytest.mark.parametrize("command", [("catalog", "lint", "--no-cache"), ("catalog", "lint"), ("catalog", "build")])
def test_a_fifo_faultkit_toml_is_refused_without_blocking(ws, run, command):
    write_entry(ws, entry_data())
    os.mkfifo(ws.root / "faultkit.toml")
    refused(run(*command, timeout=30), "faultkit.toml", "not a regular file")


@pytest.mark.parametrize("command", [("catalog", "lint"), ("apps", "show", "minishop")])
def test_a_fifo_app_yaml_is_refused_without_blocking(ws, run, command):
    write_entry(ws, entry_data())
    app = ws.apps_dir / "minishop" / "app.yaml"
    app.unlink()
    os.mkfifo(app)
    proc = run(*command, timeout=30)
    if command[0] == "apps":
        assert_clean(proc, 1, "apps/minishop/app.yaml", "not a regular file")
    else:  # lint reports it as a finding of the entry whose app it cannot read
        assert proc.returncode == 1 and "unexpected" not in proc.stderr, proc.stdout + proc.stderr
        assert "app.yaml: is not a regular file" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_a_fifo_in_the_source_checkout_is_refused_without_blocking(ws, run, tmp_path):
    source = tmp_path / "checkout"
    (source / "src" / "cartservice").mkdir(parents=True)
    (source / "src" / "cartservice" / "main.go").write_text('package main\nconst addr = "redis-cart:6379"\n')
    os.mkfifo(source / "src" / "cartservice" / "config.yaml")
    proc = run("apps", "import", "--name", "boutique", "--dry-run", "--source", str(source), MANIFEST, timeout=30)
    assert_clean(proc, 1, "src/cartservice/config.yaml", "not a regular file")


def test_init_into_a_self_referencing_folder_is_one_line(run, tmp_path):
    loop = tmp_path / "loop"
    os.symlink("loop", loop)
    assert_clean(run("init", str(loop)), 1, str(loop), "symlink loop")
    assert_clean(run("init", str(loop / "inner")), 1, "loop")
    assert os.readlink(loop) == "loop"


def test_init_below_a_file_is_one_line(run, tmp_path):
    (tmp_path / "file").write_text("x\n")
    assert_clean(run("init", str(tmp_path / "file" / "repo")), 1, "file/repo", "is not a folder")
