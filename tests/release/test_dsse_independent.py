"""An independent verifier accepts faultkit's attestations (issue 32): tools/dsse-verify, built from
secure-systems-lab's Go library, checks a bundle signed by faultkit with nothing but the public key,
and refuses a tampered one. The binary is DSSE_VERIFY_BIN (.ci/run builds it), else built here into
the same cache by tools/dsse-verify/build.sh."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from faultkit.bundles import SIGNATURE, sign
from faultkit.keys import fingerprint, generate, public_pem, signing_key
from tests.factories import port_entry
from tests.helpers.shipped import REPO, older_signed_bundles
from tests.release.admit import make_bundle

BUILD = REPO / "tools" / "dsse-verify" / "build.sh"


@pytest.fixture(scope="module")
def verifier() -> Path:
    named = os.environ.get("DSSE_VERIFY_BIN")
    if named:
        assert os.access(named, os.X_OK), f"DSSE_VERIFY_BIN={named} is not an executable"
        return Path(named)
    if shutil.which("go") is None:
        pytest.skip("no Go toolchain to build tools/dsse-verify, and DSSE_VERIFY_BIN is not set")
    proc = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip())


def verify(binary: Path, key: Path, folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), "-key", str(key), *extra, str(folder / SIGNATURE)],
                          capture_output=True, text=True, timeout=60)


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in (SIGNATURE, "labels.json")}


@pytest.fixture
def signed(ws, tmp_path) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """A bundle made and signed by faultkit, and the public key (PEM) it was signed with."""
    folder, _ = make_bundle(ws, port_entry(1))
    pub = tmp_path / "validator.pub"
    pub.write_text(public_pem(signing_key(None)))
    return ws.root / folder, pub


def test_the_go_verifier_accepts_a_bundle_faultkit_signed_and_lists_its_files(verifier, signed):
    folder, pub = signed
    proc = verify(verifier, pub, folder, "-bundle", str(folder))
    assert proc.returncode == 0, proc.stderr
    head, *lines = proc.stdout.splitlines()
    assert f"signed by {fingerprint(signing_key(None).public_key())}" in head
    assert "https://faultkit.dev/verdict/v1" in head
    listed = dict(reversed(line.split("  ", 1)) for line in lines)
    assert listed == digests(folder) and "MANIFEST.json" in listed


def test_the_go_verifier_accepts_a_shipped_bundle_once_faultkit_re_signs_it(verifier, tmp_path):
    folder = tmp_path / "bundle"
    shutil.copytree(older_signed_bundles()[-1], folder)
    key = generate(tmp_path / "rotated.key")
    sign(folder, key)
    proc = verify(verifier, tmp_path / "rotated.key.pub", folder, "-bundle", str(folder))
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 1 + len(digests(folder))


def test_the_go_verifier_refuses_a_tampered_bundle_an_edited_payload_and_another_key(verifier, signed, tmp_path):
    folder, pub = signed
    after = folder / "windows" / "after-1.json"
    original = after.read_bytes()
    after.write_bytes(original.replace(b'"ok": false', b'"ok": true'))
    proc = verify(verifier, pub, folder, "-bundle", str(folder))
    assert proc.returncode == 1 and "windows/after-1.json: digest mismatch" in proc.stderr, proc.stderr
    after.write_bytes(original)
    (folder / "windows" / "extra.json").write_text("{}")
    proc = verify(verifier, pub, folder, "-bundle", str(folder))
    assert proc.returncode == 1 and "extra.json is in the bundle but not attested" in proc.stderr, proc.stderr
    (folder / "windows" / "extra.json").unlink()

    envelope = json.loads((folder / SIGNATURE).read_text())
    payload = base64.b64decode(envelope["payload"]).replace(b'"admitted"', b'"rejected"')
    (folder / SIGNATURE).write_text(json.dumps({**envelope, "payload": base64.b64encode(payload).decode()}))
    proc = verify(verifier, pub, folder)
    assert proc.returncode == 1 and "signature not verified" in proc.stderr, proc.stderr

    (folder / SIGNATURE).write_text(json.dumps(envelope))
    assert verify(verifier, pub, folder).returncode == 0
    generate(tmp_path / "other.key")
    proc = verify(verifier, tmp_path / "other.key.pub", folder)
    assert proc.returncode == 1 and "signature not verified" in proc.stderr, proc.stderr
