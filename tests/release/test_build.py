"""`faultkit catalog build` on real workspaces: what is admitted, what is left out and why."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from jsonschema import Draft202012Validator

from faultkit.catalog.release import build_release, verify_release
from faultkit.schema import schema_text
from tests.factories import cart_prefix_entry, port_entry, write_entry
from tests.release.admit import admit, custody, make_bundle

PATCH = """\
--- a/src/cart/main.py
+++ b/src/cart/main.py
@@ -10,3 +10,4 @@
\x20
 SERVICE = "cart"
 MAX_QUANTITY = 999
+_LEGACY_PREFIX = "cart-v2:"
"""


config = port_entry


def code_entry(ws):
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(PATCH)
    return cart_prefix_entry()


def clean(data):
    return {k: v for k, v in data.items() if v is not None}


def release_file(ws) -> Path:
    files = sorted(ws.dist_dir.glob("catalog-*.json"))
    assert len(files) == 1, files
    return files[0]


def test_release_holds_admitted_entries_and_says_why_others_are_out(ws, cli):
    admit(ws, config(1))
    admit(ws, config(2), status="rejected")
    write_entry(ws, config(3))  # never validated
    stale = admit(ws, config(4))
    stale["title"] = "Edited after the verdict"
    write_entry(ws, stale)
    admit(ws, clean(code_entry(ws)))
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(PATCH.replace("_LEGACY_PREFIX", "_KEY_PREFIX"))
    write_entry(ws, config(5, scope=["nowhere"]))  # invalid

    proc = cli("catalog", "build", "--version", "1.0.0", "--json", check=0)
    out = json.loads(proc.stdout)
    assert out["path"] == "dist/catalog-1.0.0.json"
    release = json.loads((ws.root / out["path"]).read_text())
    Draft202012Validator(json.loads(schema_text("release"))).validate(release)
    verify_release(release)
    assert [e["id"] for e in release["entries"]] == ["ms-cart-port-1"]
    assert {x["id"]: x["reason"] for x in release["excluded"]} == {
        "ms-cart-port-2": "rejected",
        "ms-cart-port-3": "no-verdict",
        "ms-cart-port-4": "stale-entry",
        "ms-cart-prefix": "stale-patch",
        "ms-cart-port-5": "invalid",
    }
    assert release["counts"]["apps"]["minishop"]["categories"]["dependency"] == 1
    assert release["counts"]["total"] == 1
    assert release["bundles"]["ms-cart-port-1"].startswith("sha256:")
    assert release["aliases"]["ms-cart-port-1"] == {
        "app": "minishop",
        "artifact": {
            "kind": "manifest-field",
            "ref": "Deployment/cart/cart/env.CARTSTORE_ADDR",
            "names": ["Deployment/cart/cart/env.CARTSTORE_ADDR", "CARTSTORE_ADDR", "cart"],
        },
        "service": {"name": "cart", "workload": "cart", "names": ["cart", "cartservice"]},
    }


def test_code_fault_with_current_patch_is_admitted(ws):
    admit(ws, clean(code_entry(ws)))
    release = build_release(ws, custody(), "x")
    assert [e["id"] for e in release["entries"]] == ["ms-cart-prefix"]
    assert release["aliases"]["ms-cart-prefix"]["artifact"]["names"] == [
        "src/cart/main.py",
        "main.py",
    ]


def test_same_inputs_same_bytes_and_default_version_is_deterministic(ws, cli):
    admit(ws, config(1), at="2026-02-03T10:00:00Z")
    admit(ws, config(2), at="2026-01-01T00:00:00Z")
    first = json.loads(cli("catalog", "build", "--json", check=0).stdout)
    data = (ws.root / first["path"]).read_bytes()
    second = json.loads(cli("catalog", "build", "--json", check=0).stdout)
    assert first["path"] == second["path"]
    assert (ws.root / second["path"]).read_bytes() == data
    assert first["version"].startswith("2026.02.03-")
    assert json.loads(data)["digest"] == first["digest"]


def test_an_entry_without_evidence_is_left_out(ws):
    admit(ws, config(1), bundle=False)
    release = build_release(ws, custody(), "v1")
    assert release["bundles"] == {} and release["entries"] == []
    assert [(x["id"], x["reason"]) for x in release["excluded"]] == [("ms-cart-port-1", "no-evidence")]


def test_tampered_bundle_stops_the_build_and_writes_nothing(ws, cli):
    admit(ws, config(1))
    after = ws.evidence_dir / "ms-cart-port-1" / "run-1" / "windows" / "after-1.json"
    after.write_text(after.read_text().replace("6.0", "60.0"))
    proc = cli("catalog", "build", "--version", "1", check=1)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "catalog/minishop/ms-cart-port-1.yaml: validation.bundle" in lines[0]
    assert "windows/after-1.json digest mismatch" in lines[0]
    assert not ws.dist_dir.exists() or not list(ws.dist_dir.iterdir())


def test_bundle_resealed_after_the_verdict_stops_the_build(ws, cli):
    data = admit(ws, config(1))
    make_bundle(ws, data, status="admitted")  # a different, validly sealed bundle in place
    (ws.evidence_dir / "ms-cart-port-1" / "run-1" / "stages.json").write_text("[]\n")
    from faultkit.bundles import BundleWriter

    BundleWriter(ws.evidence_dir / "ms-cart-port-1" / "run-1").seal()
    proc = cli("catalog", "build", "--version", "1", check=1)
    assert "the verdict recorded" in proc.stderr
    assert not ws.dist_dir.exists() or not list(ws.dist_dir.iterdir())


def test_unwritable_release_folder_is_one_line(ws, cli, tmp_path):
    admit(ws, config(1))
    if os.geteuid() == 0:  # root ignores permission bits; /proc refuses new files to everyone
        proc = cli("catalog", "build", "--version", "1", "--out", "/proc", check=1)
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            proc = cli("catalog", "build", "--version", "1", "--out", str(locked), check=1)
        finally:
            locked.chmod(stat.S_IRWXU)
        assert list(locked.iterdir()) == []
    assert proc.stderr.count("\n") == 1 and "cannot write" in proc.stderr, proc.stderr
    assert not list(Path("/proc").glob("catalog-*"))


def test_release_folder_that_is_a_file_is_one_line(ws, cli):
    admit(ws, config(1))
    blocker = ws.root / "dist"
    blocker.write_text("not a folder")
    proc = cli("catalog", "build", "--version", "1", check=1)
    assert proc.stderr.count("\n") == 1 and "dist" in proc.stderr
    assert blocker.read_text() == "not a folder"


def test_bad_version_is_a_usage_error(ws, cli):
    proc = cli("catalog", "build", "--version", "../evil", check=2)
    assert "--version" in proc.stderr
