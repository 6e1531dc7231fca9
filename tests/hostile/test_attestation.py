"""A bundle's signature as an in-toto statement in a DSSE envelope (issue 32): what a new bundle
carries, checked against the specs by hand; every way of making the attestation say something else
than the bundle is refused in one line; the shipped bundles' older signatures still verify."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from faultkit import attestation
from faultkit.bundles import MANIFEST, SIGNATURE, dumps, manifest_files, signer
from faultkit.errors import InputError
from faultkit.keys import fingerprint, generate, load_private, signing_key, trusted
from tests.factories import port_entry
from tests.helpers.cli import cli_env
from tests.helpers.shipped import REPO, all_bundles, older_signed_bundles
from tests.hostile.refusal import assert_clean
from tests.release.admit import make_bundle


@pytest.fixture
def bundle(ws) -> Path:  # type: ignore[no-untyped-def]
    folder, _ = make_bundle(ws, port_entry(1))
    return ws.root / folder


def envelope_of(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / SIGNATURE).read_text())
    return data


def statement_of(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(base64.b64decode(envelope_of(folder)["payload"]))
    return data


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1's pre-authentication encoding, written from the spec to check the library's."""
    t = payload_type.encode()
    return b"DSSEv1 " + str(len(t)).encode() + b" " + t + b" " + str(len(payload)).encode() + b" " + payload


def file_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file of the folder but the envelope, computed here, not by faultkit."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != SIGNATURE}


def test_a_new_bundle_is_signed_as_an_in_toto_statement_in_a_dsse_envelope(bundle):
    env = envelope_of(bundle)
    key = signing_key(None).public_key()
    assert env["payloadType"] == "application/vnd.in-toto+json"
    [sig] = env["signatures"]
    assert sig["keyid"] == fingerprint(key)
    payload = base64.b64decode(env["payload"])
    key.verify(base64.b64decode(sig["sig"]), pae(env["payloadType"], payload))  # raises when it does not verify
    stmt = json.loads(payload)
    assert stmt["_type"] == "https://in-toto.io/Statement/v1"
    assert stmt["predicateType"] == "https://faultkit.dev/verdict/v1"
    assert {s["name"]: s["digest"]["sha256"] for s in stmt["subject"]} == file_digests(bundle)
    assert MANIFEST in file_digests(bundle) and "windows/after-1.json" in file_digests(bundle)
    verdict = json.loads((bundle / "verdict.json").read_text())
    inputs = json.loads((bundle / "inputs.json").read_text())
    assert stmt["predicate"]["verdict"]["status"] == verdict["status"] == "admitted"
    assert stmt["predicate"]["verdict"]["summary"] == verdict["summary"]
    attested = stmt["predicate"]["inputs"]["digests"]
    assert attested["entry_digest"] == inputs["entry_digest"]
    in_text = set(re.findall(r'"(sha256:[0-9a-f]{64})"', (bundle / "inputs.json").read_text()))
    assert set(attested.values()) == in_text  # every sealed input's digest, and nothing else
    assert stmt["predicate"]["inputs"]["rules_version"] == inputs["rules_version"]
    assert signer(bundle) == fingerprint(key)


def resign(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """What only the key holder can do: sign a statement that says something else than the bundle."""
    stmt = statement_of(folder)
    change(stmt)
    (folder / SIGNATURE).write_text(dumps(attestation.envelope(stmt, signing_key(None))))


def subject_named(stmt: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in stmt["subject"] if s["name"] == name)
    return found


@pytest.mark.parametrize("change,needle", [
    (lambda s: s["subject"].append({"name": "extra.json", "digest": {"sha256": "0" * 64}}),
     "extra.json is attested but not sealed"),
    (lambda s: s["subject"].remove(subject_named(s, "windows/after-2.json")),
     "windows/after-2.json is sealed but not attested"),
    (lambda s: subject_named(s, MANIFEST)["digest"].update(sha256="1" * 64), "MANIFEST.json is attested as"),
    (lambda s: subject_named(s, "inputs.json")["digest"].update(sha256="2" * 64), "does not match MANIFEST.json"),
    (lambda s: s["subject"].append(dict(subject_named(s, "stages.json"))), "not a unique name"),
    (lambda s: s["predicate"]["verdict"].update(status="rejected"), "attested verdict or inputs"),
    (lambda s: s["predicate"]["inputs"]["digests"].update(entry_digest="sha256:" + "3" * 64),
     "attested verdict or inputs"),
    (lambda s: s.update(predicateType="https://slsa.dev/provenance/v1"), "predicateType"),
    (lambda s: s.update(_type="https://in-toto.io/Statement/v0.1"), "not an in-toto Statement v1"),
])
def test_an_attestation_that_says_something_else_than_the_bundle_is_refused(bundle, run, change, needle):
    resign(bundle, change)
    with pytest.raises(InputError, match="SIGNATURE.json"):
        signer(bundle)
    assert_clean(run("judge", str(bundle)), 1, needle)


def edit_envelope(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    env = envelope_of(folder)
    change(env)
    (folder / SIGNATURE).write_text(json.dumps(env))


def other_key_b64(tmp_path: Path) -> str:
    """The raw public half of another key, made once per test."""
    path = tmp_path / "other.key"
    key = load_private(path) if path.exists() else generate(path)
    return base64.b64encode(key.public_key().public_bytes_raw()).decode()


@pytest.mark.parametrize("change,needle", [
    (lambda e, t: e.update(payload=base64.b64encode(base64.b64decode(e["payload"]).replace(
        b'"admitted"', b'"rejected"')).decode()), "signature does not verify"),
    (lambda e, t: e.update(payloadType="application/json"), "payloadType"),
    (lambda e, t: e["signatures"].append(dict(e["signatures"][0])), "exactly one signature"),
    (lambda e, t: e["signatures"][0].update(keyid="ed25519:" + "4" * 64), "names another key"),
    (lambda e, t: e["signatures"][0].update(publicKey=other_key_b64(t)), "names another key"),
    (lambda e, t: e["signatures"][0].update(keyid=fingerprint(Ed25519PublicKey.from_public_bytes(
        base64.b64decode(other_key_b64(t)))), publicKey=other_key_b64(t)), "signature does not verify"),
    (lambda e, t: e["signatures"][0].pop("publicKey"), "no valid ed25519 publicKey"),
    (lambda e, t: e["signatures"][0].update(sig="not base64!"), "not valid DSSE"),
    (lambda e, t: e.update(payload=base64.b64encode(b"\xff\xfe").decode()), "signature does not verify"),
])
def test_a_forged_or_broken_envelope_is_refused_in_one_line(bundle, run, tmp_path, change, needle):
    edit_envelope(bundle, lambda e: change(e, tmp_path))
    assert_clean(run("judge", str(bundle)), 1, "SIGNATURE.json", needle)


def test_a_file_added_after_signing_is_refused_even_when_resealed(bundle, run):
    (bundle / "windows" / "extra.json").write_text("{}")
    manifest = json.loads((bundle / MANIFEST).read_text())
    manifest["files"]["windows/extra.json"] = "sha256:" + hashlib.sha256(b"{}").hexdigest()
    (bundle / MANIFEST).write_text(dumps(manifest))
    assert_clean(run("judge", str(bundle)), 1, "windows/extra.json is sealed but not attested")


def test_every_shipped_bundle_is_signed_by_a_trusted_key_and_the_older_signatures_still_verify():
    keys = trusted(REPO)
    assert keys
    bundles, older = all_bundles(), older_signed_bundles()
    assert len(older) > 100  # minishop's catalog, signed before attestations
    for folder in older:
        assert envelope_of(folder)["algorithm"] == "ed25519", folder
    for folder in set(bundles) - set(older):  # Bank of Anthos' catalog, attested
        assert attestation.is_envelope(envelope_of(folder)), folder
    for folder in bundles:
        assert signer(folder) in keys, folder


def test_an_older_signature_over_another_manifest_is_still_refused(tmp_path):
    folder = tmp_path / "bundle"
    shutil.copytree(older_signed_bundles()[0], folder)
    manifest = folder / MANIFEST
    manifest.write_text(manifest.read_text().replace('"files"', '"files" ', 1))
    with pytest.raises(InputError, match="signature does not match MANIFEST.json"):
        signer(folder)


def test_sign_evidence_turns_an_older_signature_into_an_attestation_without_touching_the_manifest(ws, tmp_path):
    folder = ws.evidence_dir / "shipped" / "run"
    shutil.copytree(older_signed_bundles()[0], folder)
    before = (folder / MANIFEST).read_bytes()
    generate(tmp_path / "rotated.key")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "sign_evidence.py"), "--key",
                           str(tmp_path / "rotated.key"), str(folder)], cwd=ws.root, env=cli_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (folder / MANIFEST).read_bytes() == before
    assert attestation.is_envelope(envelope_of(folder))
    rotated = (tmp_path / "rotated.key.pub").read_text()
    assert signer(folder) == fingerprint(_load_public(rotated))
    subjects = {s["name"] for s in statement_of(folder)["subject"]}
    assert subjects == set(manifest_files(folder)) | {MANIFEST}


def _load_public(pem: str) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    key = load_pem_public_key(pem.encode())
    assert isinstance(key, Ed25519PublicKey)
    return key
