"""Files that try to crash, hang or exhaust faultkit: each is refused quickly with its file and
line, or reported as a lint finding, never a traceback, a signal or a hang."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from tests.factories import entry_data
from tests.hostile.refusal import assert_clean

LAUGHS = 'lol: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"l{i}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))


def entry_text(**over: object) -> str:
    return yaml.safe_dump(entry_data(**over), sort_keys=False)


def base() -> str:
    return entry_text()


# (name, file text or bytes, text the finding holds, exit code of `catalog lint`)
LINT_CASES = [
    ("billion-laughs", base() + LAUGHS, "values once aliases are expanded", 1),
    ("nested-1000", base() + "x: " + "[" * 1000 + "]" * 1000 + "\n", "nesting deeper than", 1),
    ("nested-100000", base() + "x: " + "[" * 100_000 + "]" * 100_000 + "\n", "nesting deeper than", 1),
    ("nested-blocks", base() + "".join(" " * i + f"k{i}:\n" for i in range(200)) + " " * 200 + "v: 1\n",
     "nesting deeper than", 1),
    ("nested-dashes", base() + "x:\n" + "- " * 5000 + "1\n", "nesting deeper than", 1),
    ("huge-int", base().replace("expect_status: 200", "expect_status: " + "9" * 5000), "beyond 64 bits", 1),
    ("nan-timeout", base().replace("expect_status: 200", "expect_status: 200\n  timeout_s: .nan"),
     "not a finite number", 1),
    ("inf-timeout", base().replace("expect_status: 200", "expect_status: 200\n  timeout_s: -.inf"),
     "not a finite number", 1),
    ("int-key", "1: x\n" + base(), "keys must be strings", 1),
    ("nested-int-key", base().replace("target:\n", "target:\n  7: x\n"), "keys must be strings", 1),
    ("list-key", "? [a, b]\n: x\n" + base(), "unhashable key", 1),
    ("merge-key", "base: &b {service: cart}\n" + base().replace("target:\n", "target:\n  <<: *b\n"),
     "merge key", 1),
    ("date-value", base().replace("title: ", "title: 2026-01-01\nx_title: "), "date value", 1),
    ("binary-tag", base() + "blob: !!binary aGVsbG8=\n", "bytes value", 1),
    ("set-tag", base() + "s: !!set {a, b}\n", "a set value", 1),
    ("hex-int", base() + "h: 0x" + "f" * 40 + "\n", "beyond 64 bits", 1),
    ("float-overflow", base() + "f: 1.0e+99999\n", "not a finite number", 1),
    ("python-tag", base() + "p: !!python/object:os.system [id]\n", "malformed YAML", 1),
    ("unknown-nested-key", base().replace("target:\n", "target:\n  surprise: 1\n"), "unknown key 'surprise'", 0),
    ("unknown-deep-key", base().replace("  aliases:\n", "  aliases:\n  - x\n  deep:\n    deeper: {a: 1}\n  al:\n", 1),
     "unknown key", 0),
    ("markup-id", entry_text(id="[/red]"), "[/red]", 1),
    ("markup-title", entry_text(title="[bold red]x[/]"), "", 0),
    ("id-trailing-newline", entry_text(id="ms-cart-store-port\n"), "does not match the expected form", 1),
    ("id-with-dotdot", entry_text(id="../../etc/x"), "does not match the expected form", 1),
    ("target-list", base().replace("target:\n", "target: []\nx_target:\n"), "expected object", 1),
    ("probe-string", base().replace("probe:\n", "probe: x\nx_probe:\n"), "expected object", 1),
    ("document-list", "- a\n- b\n", "expected a mapping", 1),
    ("document-scalar", "42\n", "expected a mapping", 1),
    ("empty", "", "expected a mapping", 1),
    ("two-documents", base() + "---\n" + base(), "malformed YAML", 1),
    ("binary-file", b"\x00\x01\x02", "binary file", 1),
    ("latin-1", "title: caf\xe9\n".encode("latin-1"), "not UTF-8", 1),
    ("oversized", "a: " + "x" * (2 * 1024 * 1024) + "\n", "too large", 1),
    ("tab-indent", "a:\n\t- b\n", "malformed YAML", 1),
    ("unclosed-flow", base() + "x: [1, 2\n", "malformed YAML", 1),
]


def lint(run, *paths: str, strict: bool = False):  # type: ignore[no-untyped-def]
    start = time.monotonic()
    proc = run("catalog", "lint", *(("--strict",) if strict else ()), *paths, timeout=60)
    return proc, time.monotonic() - start


@pytest.mark.parametrize("name,content,needle,code", LINT_CASES, ids=[c[0] for c in LINT_CASES])
def test_hostile_entry_is_a_finding_never_a_crash(ws, run, name, content, needle, code):
    path = ws.catalog_dir / "minishop" / "ms-cart-store-port.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    proc, took = lint(run)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert proc.returncode >= 0 and "Traceback" not in proc.stderr and not proc.stderr.strip(), proc.stderr
    assert needle in proc.stdout, proc.stdout
    assert took < 10, f"{name}: lint took {took:.1f} s"


def test_markup_in_a_file_path_is_printed_as_text(ws, run):
    folder = ws.catalog_dir / "["
    folder.mkdir()
    (folder / "red].yaml").write_text("- not an entry\n")
    proc, _ = lint(run)
    assert proc.returncode == 1 and "catalog/[/red].yaml" in proc.stdout and not proc.stderr, proc.stderr


def test_a_fifo_in_the_catalog_does_not_hang_lint(ws, run):
    os.mkfifo(ws.catalog_dir / "minishop" / "pipe.yaml")
    proc, took = lint(run)
    assert proc.returncode == 1 and "not a regular file" in proc.stdout, proc.stdout + proc.stderr
    assert took < 30


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/stdin"])
def test_a_device_as_an_entry_is_refused(ws, run, device):
    proc, _ = lint(run, device)
    assert proc.returncode == 1 and "not a regular file" in proc.stdout, proc.stdout + proc.stderr


def test_an_unknown_nested_key_is_an_error_under_strict(ws, run):
    (ws.catalog_dir / "minishop" / "ms-cart-store-port.yaml").write_text(
        base().replace("target:\n", "target:\n  surprise: 1\n"))
    proc, _ = lint(run, strict=True)
    assert proc.returncode == 1 and "unknown key 'surprise'" in proc.stdout


# ------------------------------------------------------------------ releases and schedules


def release_with(**over: object) -> str:
    doc = {"schema": "faultkit/release/v1", "version": "1", "digest": "sha256:" + "0" * 64, "entries": []}
    doc.update(over)
    return json.dumps(doc)


RELEASE_CASES = [
    ("dev-zero", None, "not a regular file"),
    ("nan", release_with(entries=[{"app": "minishop", "probe": {"timeout_s": float("nan")}}]), "not a finite"),
    ("infinity", release_with().replace('"entries": []', '"entries": [Infinity]'), "not a finite"),
    ("huge-int", release_with().replace('"entries": []', '"entries": [' + "1" * 5000 + "]"), "beyond 64 bits"),
    ("nested-100000", "[" * 100_000 + "]" * 100_000, "nesting deeper than"),
    ("nested-1000", release_with(entries=[]).replace("[]", "[" * 1000 + "]" * 1000), "nesting deeper than"),
    ("not-json", "{nope", "not valid JSON"),
    ("a-list", "[]", "not a catalog release"),
    ("entries-not-objects", release_with(entries=[1, 2]), "entries must be objects"),
    ("entry-missing-fields", release_with(entries=[{"app": "minishop", "id": "x"}]), "malformed"),
    ("entry-wrong-types", release_with(entries=[{"app": "minishop", "id": "abc", "target": [], "config": 1}]),
     "malformed"),
    ("no-entries-for-app", release_with(entries=[{"app": "other"}]), "no entries for app"),
]


@pytest.mark.parametrize("name,text,needle", RELEASE_CASES, ids=[c[0] for c in RELEASE_CASES])
def test_hostile_release_is_one_line(ws, run, tmp_path, name, text, needle):
    if text is None:
        release = Path("/dev/zero")
    else:
        release = tmp_path / "catalog-1.json"
        release.write_text(text)
    out = tmp_path / "schedule.json"
    proc = run("schedule", "export", "--app", "minishop", "--seed", "1", "--release", str(release),
               "--out", str(out), timeout=30)
    assert_clean(proc, 1, needle)
    assert not out.exists()


SCHEDULE_CASES = [
    ("nan", '{"schema": "faultkit/schedule/v1", "x": NaN}', "not a finite"),
    ("nested", "[" * 100_000 + "]" * 100_000, "nesting deeper than"),
    ("wrong-shape", '{"schema": "faultkit/schedule/v1", "events": 3}', "not a valid schedule"),
    ("a-fifo", None, "not a regular file"),
]


@pytest.mark.parametrize("name,text,needle", SCHEDULE_CASES, ids=[c[0] for c in SCHEDULE_CASES])
def test_hostile_schedule_is_one_line(ws, run, tmp_path, name, text, needle):
    path = tmp_path / "schedule.json"
    if text is None:
        os.mkfifo(path)
    else:
        path.write_text(text)
    assert_clean(run("schedule", "show", str(path), timeout=30), 1, needle)


def test_a_descriptor_bomb_is_refused(ws, run):
    folder = ws.apps_dir / "bomb"
    folder.mkdir()
    (folder / "app.yaml").write_text(LAUGHS)
    assert_clean(run("apps", "show", "bomb", timeout=30), 1, "aliases are expanded")


def test_a_manifest_bomb_for_apps_import_is_refused(ws, run, tmp_path):
    manifest = tmp_path / "bomb.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" + LAUGHS.replace("lol:", "data:", 1))
    start = time.monotonic()
    assert_clean(run("apps", "import", "--name", "bomb", str(manifest), timeout=60), 1, "aliases are expanded")
    assert time.monotonic() - start < 10
    assert not (ws.apps_dir / "bomb").exists()


def test_a_deep_manifest_for_apps_import_is_refused(ws, run, tmp_path):
    manifest = tmp_path / "deep.yaml"
    manifest.write_text("kind: ConfigMap\ndata: " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert_clean(run("apps", "import", "--name", "deep", str(manifest), timeout=60), 1, "nesting deeper than")
