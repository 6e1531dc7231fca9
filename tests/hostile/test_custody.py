"""`catalog build` admits only what a trusted validator observed: forged, stale and unsigned
evidence is left out with the reason, altered evidence stops the build."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from faultkit.bundles import MANIFEST, SIGNATURE, sign
from faultkit.catalog.model import entry_from_data
from faultkit.errors import InputError
from faultkit.keys import fingerprint, generate
from tests.factories import cart_prefix_entry, port_entry, write_entry
from tests.hostile.refusal import assert_clean
from tests.release.admit import admit, make_bundle

PATCH = """\
--- a/src/cart/main.py
+++ b/src/cart/main.py
@@ -10,3 +10,4 @@
\x20
 SERVICE = "cart"
 MAX_QUANTITY = 999
+_LEGACY_PREFIX = "cart-v2:"
"""


def released(ws, run, *args):  # type: ignore[no-untyped-def]
    proc = run("catalog", "build", "--version", "1", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    release = json.loads((ws.root / out["path"]).read_text())
    reasons = {x["id"]: x["reason"] for x in release["excluded"]}
    return [e["id"] for e in release["entries"]], reasons, release


def reseal(folder: Path) -> str:
    """What a forger can do: rewrite the manifest (anyone can compute sha256) and keep or drop the
    signature. Returns the new bundle digest."""
    (folder / SIGNATURE).unlink(missing_ok=True)
    files = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()
             and p.name not in (MANIFEST, SIGNATURE)}
    manifest = {"files": {k: "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest() for k, p in files.items()}}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return "sha256:" + hashlib.sha256((folder / MANIFEST).read_bytes()).hexdigest()


def set_validation(ws, data, **changes):  # type: ignore[no-untyped-def]
    data = {**data, "validation": {**data["validation"], **changes}}
    write_entry(ws, data)
    return data


def test_a_valid_admission_is_released_with_its_signer(ws, run):
    admit(ws, port_entry(1))
    ids, reasons, release = released(ws, run)
    assert ids == ["ms-cart-port-1"] and reasons == {}
    assert release["signers"]["ms-cart-port-1"].startswith("ed25519:")


def test_an_edited_entry_with_its_digest_recomputed_is_left_out(ws, run):
    data = admit(ws, port_entry(1))
    edited = {**data, "config": {**data["config"], "new": "cartstore:7000"}}
    body = {k: v for k, v in edited.items() if k != "validation"}
    set_validation(ws, edited, entry_digest=entry_from_data(body).digest())
    ids, reasons, _ = released(ws, run)
    assert ids == [] and reasons == {"ms-cart-port-1": "stale-entry"}


def test_an_entry_made_up_from_a_copy_pointing_to_a_missing_bundle_is_left_out(ws, run):
    data = admit(ws, port_entry(1))
    copy = {**port_entry(2), "validation": {**data["validation"], "bundle": "evidence/ms-cart-port-2/run-1"}}
    body = {k: v for k, v in copy.items() if k != "validation"}
    copy["validation"]["entry_digest"] = entry_from_data(body).digest()
    write_entry(ws, copy)
    ids, reasons, _ = released(ws, run)
    assert ids == ["ms-cart-port-1"] and reasons == {"ms-cart-port-2": "no-evidence"}


def test_a_copy_pointing_at_another_entrys_real_bundle_is_left_out(ws, run):
    data = admit(ws, port_entry(1))
    copy = {**port_entry(2), "validation": dict(data["validation"])}
    body = {k: v for k, v in copy.items() if k != "validation"}
    copy["validation"]["entry_digest"] = entry_from_data(body).digest()
    write_entry(ws, copy)
    ids, reasons, _ = released(ws, run)
    assert ids == ["ms-cart-port-1"] and reasons == {"ms-cart-port-2": "stale-entry"}


def test_a_deleted_evidence_folder_changes_the_release(ws, run):
    admit(ws, port_entry(1))
    first, _, _ = released(ws, run)
    shutil.rmtree(ws.evidence_dir)
    ids, reasons, _ = released(ws, run)
    assert first == ["ms-cart-port-1"] and ids == [] and reasons == {"ms-cart-port-1": "no-evidence"}


def test_a_changed_patch_with_its_digest_recomputed_is_left_out(ws, run):
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(PATCH)
    data = admit(ws, {k: v for k, v in cart_prefix_entry().items() if v is not None})
    patch = ws.patches_dir / "minishop" / "ms-cart-prefix.diff"
    patch.write_text(PATCH.replace("_LEGACY_PREFIX", "_KEY_PREFIX"))
    set_validation(ws, data, patch_digest="sha256:" + hashlib.sha256(patch.read_bytes()).hexdigest())
    ids, reasons, _ = released(ws, run)
    assert ids == [] and reasons == {"ms-cart-prefix": "stale-patch"}


def test_a_resealed_bundle_with_the_digest_updated_is_refused_as_unsigned(ws, run):
    data = admit(ws, port_entry(1))
    folder = ws.root / data["validation"]["bundle"]
    after = folder / "windows" / "after-1.json"
    after.write_text(after.read_text().replace('"ok": false', '"ok": true'))
    set_validation(ws, data, bundle_digest=reseal(folder))
    ids, reasons, release = released(ws, run)
    assert ids == [] and reasons == {"ms-cart-port-1": "untrusted"}
    assert "not signed" in release["excluded"][0]["detail"]


def test_a_resealed_bundle_keeping_the_old_signature_is_refused(ws, run):
    data = admit(ws, port_entry(1))
    folder = ws.root / data["validation"]["bundle"]
    signature = (folder / SIGNATURE).read_bytes()
    inputs = folder / "inputs.json"
    inputs.write_text(inputs.read_text().replace('"repeat": 2', '"repeat": 1'))
    digest = reseal(folder)
    (folder / SIGNATURE).write_bytes(signature)
    set_validation(ws, data, bundle_digest=digest)
    ids, reasons, release = released(ws, run)
    assert ids == [] and reasons == {"ms-cart-port-1": "untrusted"}
    assert "does not match MANIFEST.json" in release["excluded"][0]["detail"]


def test_a_bundle_signed_by_a_foreign_key_is_refused_under_trust(ws, run, tmp_path):
    ours = generate(tmp_path / "ours.key")
    data = admit(ws, port_entry(1))  # signed by this user's default key, which --trust does not name
    ids, reasons, release = released(ws, run, "--trust", str(tmp_path / "ours.key.pub"))
    assert ids == [] and reasons == {"ms-cart-port-1": "untrusted"}
    assert "not a trusted validator key" in release["excluded"][0]["detail"]
    sign(ws.root / data["validation"]["bundle"], ours)  # now signed by the trusted key
    ids, reasons, release = released(ws, run, "--trust", str(tmp_path / "ours.key.pub"))
    assert ids == ["ms-cart-port-1"] and release["signers"]["ms-cart-port-1"] == fingerprint(ours.public_key())


def test_an_unsigned_bundle_is_refused_under_the_toml_trust_list(ws, run, tmp_path):
    ours = generate(tmp_path / "ours.key")
    data = admit(ws, port_entry(1))
    folder = ws.root / data["validation"]["bundle"]
    (folder / SIGNATURE).unlink()
    (ws.root / "faultkit.toml").write_text(f'[trust]\nkeys = ["{fingerprint(ours.public_key())}"]\n')
    ids, reasons, _ = released(ws, run)
    assert ids == [] and reasons == {"ms-cart-port-1": "untrusted"}
    sign(folder, ours)
    ids, reasons, _ = released(ws, run)
    assert ids == ["ms-cart-port-1"]


def test_a_trusted_bundle_whose_verdict_is_not_what_its_files_give_stops_the_build(ws, run):
    data = admit(ws, port_entry(1), status="rejected")
    folder = ws.root / data["validation"]["bundle"]
    verdict = json.loads((folder / "verdict.json").read_text())
    verdict["status"] = "admitted"
    (folder / "verdict.json").write_text(json.dumps(verdict, indent=1, sort_keys=True) + "\n")
    from faultkit.keys import signing_key

    digest = reseal(folder)
    sign(folder, signing_key(None))  # even the trusted key cannot make files say what they do not
    set_validation(ws, data, verdict="admitted", bundle_digest=digest, failed_rules=[])
    proc = run("catalog", "build", "--version", "1")
    assert_clean(proc, 1, "judged again")
    assert not (ws.dist_dir / "catalog-1.json").exists()


def test_a_private_key_inside_the_repository_is_refused(ws, run):
    generate(ws.root / "validator.key")
    (ws.root / "faultkit.toml").write_text('[validator]\nkey = "validator.key"\n')  # relative to the repository
    with pytest.raises(InputError, match="inside the repository"):
        make_bundle(ws, port_entry(1))
    assert not (ws.evidence_dir / "ms-cart-port-1" / "run-1" / SIGNATURE).exists()


def test_altered_labels_beside_a_trusted_bundle_stop_the_build(ws, run):
    data = admit(ws, port_entry(1))
    assert run("label", data["id"], "--write").returncode == 0
    labels = ws.root / data["validation"]["bundle"] / "labels.json"
    ids, _, release = released(ws, run)
    assert ids == ["ms-cart-port-1"] and release["labels"]["ms-cart-port-1"] == json.loads(labels.read_text())
    forged = json.loads(labels.read_text())
    forged["evidence"] = {}
    labels.write_text(json.dumps(forged, indent=1, sort_keys=True) + "\n")
    assert_clean(run("catalog", "build", "--version", "2"), 1, "labels.json differs from the labels its files give")
    assert not (ws.dist_dir / "catalog-2.json").exists()
