"""`faultkit judge` on bundles a forger reworked: every one is refused in one line, by name, and
judge never reads a file outside the bundle or one the manifest does not list."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from faultkit.bundles import MANIFEST, SIGNATURE, sign
from faultkit.keys import generate, load_private
from tests.factories import port_entry
from tests.hostile.refusal import assert_clean
from tests.release.admit import make_bundle


@pytest.fixture
def bundle(ws) -> Path:  # type: ignore[no-untyped-def]
    folder, _ = make_bundle(ws, port_entry(1))
    return ws.root / folder


def forge(folder: Path, key_dir: Path) -> None:
    """Reseal and re-sign with the forger's own key: the bundle verifies, only trust would refuse it."""
    for name in (MANIFEST, SIGNATURE):
        (folder / name).unlink(missing_ok=True)
    files = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}
    manifest = {"files": {k: "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest() for k, p in files.items()}}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    key_path = key_dir / "forger.key"
    sign(folder, load_private(key_path) if key_path.exists() else generate(key_path))


def edit_json(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(path.read_text())
    data = change(data)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def test_the_untouched_bundle_judges_to_its_verdict(bundle, run):
    proc = run("judge", str(bundle))
    assert proc.returncode == 0 and "matches the recorded one" in proc.stdout


def test_an_edited_window_without_reseal_is_refused(bundle, run):
    after = bundle / "windows" / "after-1.json"
    after.write_text(after.read_text().replace('"ok": false', '"ok": true'))
    assert_clean(run("judge", str(bundle)), 1, "windows/after-1.json digest mismatch")


def test_a_resealed_bundle_keeping_the_validators_signature_is_refused(bundle, run):
    signature = (bundle / SIGNATURE).read_bytes()
    edit_json(bundle / "inputs.json", lambda d: {**d, "params": {**d["params"], "repeat": 1}})
    forge(bundle, bundle.parent)
    (bundle / SIGNATURE).write_bytes(signature)
    assert_clean(run("judge", str(bundle)), 1, "signature does not match MANIFEST.json")


def test_a_consistent_forgery_signed_by_the_forgers_key_is_refused(bundle, run, tmp_path):
    after = bundle / "windows" / "after-1.json"
    after.write_text(after.read_text().replace('"ok": false', '"ok": true'))
    from faultkit.bundles import dumps
    from tests.release.admit import judge_bundle

    (bundle / "verdict.json").write_text(dumps(judge_bundle(bundle)))  # the verdict agrees with the edit
    forge(bundle, tmp_path)
    assert_clean(run("judge", str(bundle)), 1, "not a trusted validator key")
    (bundle / SIGNATURE).unlink()
    assert_clean(run("judge", str(bundle)), 1, "the bundle is not signed")
    proc = run("judge", str(bundle), "--trust", str(tmp_path / "forger.key.pub"))
    assert_clean(proc, 1, "the bundle is not signed")


def test_a_window_name_leaving_the_bundle_is_refused(bundle, run, tmp_path):
    secret = tmp_path / "outside.json"
    secret.write_text(json.dumps({"samples": [], "logs": []}))
    rel = os.path.relpath(secret, bundle / "windows")
    leave = rel.removesuffix(".json")
    edit_json(bundle / "stages.json", lambda d: {**d, "cycles": [{**d["cycles"][0], "after": leave}]})
    forge(bundle, tmp_path)
    assert_clean(run("judge", str(bundle)), 1, "not a plain path inside the bundle")


def test_a_sealed_symlink_to_a_system_file_is_refused(bundle, run, tmp_path):
    os.symlink("/etc/hostname", bundle / "windows" / "extra.json")
    assert_clean(run("judge", str(bundle)), 1, "windows/extra.json is a symlink")
    forge(bundle, tmp_path)  # even sealed and signed into the manifest
    assert_clean(run("judge", str(bundle)), 1, "symlink")


def test_a_window_replaced_by_a_symlink_is_refused(bundle, run, tmp_path):
    target = tmp_path / "copy.json"
    target.write_bytes((bundle / "windows" / "after-1.json").read_bytes())
    (bundle / "windows" / "after-1.json").unlink()
    os.symlink(target, bundle / "windows" / "after-1.json")
    assert_clean(run("judge", str(bundle)), 1, "after-1.json is a symlink")


def test_a_symlinked_windows_folder_is_refused(bundle, run, tmp_path):
    os.rename(bundle / "windows", tmp_path / "windows")
    os.symlink(tmp_path / "windows", bundle / "windows")
    assert_clean(run("judge", str(bundle)), 1, "windows is a symlink")


def test_a_manifest_naming_a_path_outside_is_refused(bundle, run, tmp_path):
    edit_json(bundle / MANIFEST, lambda d: {"files": {**d["files"], "../../x": "sha256:" + "0" * 64}})
    assert_clean(run("judge", str(bundle)), 1, "'../../x' is not a plain path")


def test_a_manifest_naming_an_absolute_path_is_refused(bundle, run):
    edit_json(bundle / MANIFEST, lambda d: {"files": {**d["files"], "/etc/passwd": "sha256:" + "0" * 64}})
    assert_clean(run("judge", str(bundle)), 1, "'/etc/passwd' is not a plain path")


def test_a_fifo_in_the_bundle_is_refused_without_hanging(bundle, run):
    os.mkfifo(bundle / "windows" / "pipe.json")
    assert_clean(run("judge", str(bundle), timeout=30), 1, "pipe.json is not a regular file")


@pytest.mark.parametrize("name,value", [
    ("inputs.json", []),
    ("inputs.json", {"rules_version": 1}),
    ("stages.json", {"cycles": [1, 2]}),
    ("stages.json", {"cycles": [{"before": ["x"]}]}),
    ("stages.json", {"cycles": [{"before": "before-1", "after": "after-1", "counted": True, "index": 1,
                                 "inject": []}], "stages": "lint"}),
    ("windows/after-1.json", {"samples": {}, "logs": 3}),
    ("windows/after-1.json", {"samples": [{"t": "x", "instances": []}], "logs": []}),
    ("windows/after-1.json", []),
    ("verdict.json", "admitted"),
])
def test_records_of_the_wrong_shape_resealed_are_one_line(bundle, run, tmp_path, name, value):
    keep = json.loads((bundle / "inputs.json").read_text())
    if name == "inputs.json" and isinstance(value, dict):
        value = {**value, "rules_version": keep["rules_version"]}
    (bundle / name).write_text(json.dumps(value))
    forge(bundle, tmp_path)
    proc = run("judge", str(bundle))
    if proc.returncode == 1 and not proc.stderr:  # judged, and the verdict differs: also a refusal
        assert "MISMATCH" in proc.stdout
    else:
        assert_clean(proc, 1)


@pytest.mark.parametrize("text,needle", [
    ('{"samples": [], "logs": [], "window_s": NaN}', "NaN is not a finite number"),
    ('{"samples": [], "logs": [], "window_s": 1e999}', "not a finite number"),
    ('{"samples": [], "logs": [], "window_s": ' + "9" * 400 + "}", "beyond 64 bits"),
    ("[" * 100_000 + "]" * 100_000, "nesting deeper than"),
    ("[" * 1_000 + "]" * 1_000, "nesting deeper than"),
    ('{"a": "\udcff"}', "not UTF-8"),
])
def test_hostile_json_in_a_resealed_window_is_refused(bundle, run, tmp_path, text, needle):
    (bundle / "windows" / "after-1.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    forge(bundle, tmp_path)
    assert_clean(run("judge", str(bundle)), 1, needle)
