"""Evidence bundles: one folder per validation run, sealed by a manifest of sha256 digests and
signed by the validator's ed25519 key.

The verdict is computed from the bundle alone (validators/judge.py), so a bundle must hold every
input the rules read, and any change to it after sealing must be detected. The seal (MANIFEST.json)
detects edits, but anyone can recompute it; the signature (SIGNATURE.json) says which key sealed
it, so `catalog build --trust` can admit only bundles sealed by the trusted validator. The
signature lives beside the manifest, not in it: the bundle digest an entry records (sha256 of
MANIFEST.json) stays what it was.

SIGNATURE.json is written as a DSSE envelope of an in-toto statement whose subjects are the
bundle's files and MANIFEST.json (faultkit/attestation.py, issue 32); the record of bundles signed
before it (an ed25519 signature over the exact bytes of MANIFEST.json) is still read, so the
shipped bundles verify as they are.

Bundles come from pull requests, so reading one is defensive: only regular files inside the folder
(no symlink anywhere on the way, no device, no FIFO), named by a plain relative path, under a size
limit, parsed with faultkit's JSON limits.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from faultkit import attestation, jsonio
from faultkit.errors import FaultkitError, InputError, UsageError
from faultkit.keys import fingerprint, signing_key
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write

MANIFEST = "MANIFEST.json"
SIGNATURE = "SIGNATURE.json"
SEAL_FILES = (MANIFEST, SIGNATURE)
# derived from the sealed files and recomputed by judge, so kept outside the seal: adding one to a
# shipped bundle must not change the digest its entry records
LABELS = "labels.json"
DERIVED = (LABELS,)
MAX_FILE = 16 * 1024 * 1024  # a window of a long run is a few megabytes
MAX_FILES = 10_000
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_MEMBER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def dumps(data: Any) -> str:
    """The one JSON spelling bundles use, so re-serialising a verdict gives the same bytes."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def digest_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    return digest_bytes(path.read_bytes())


# ------------------------------------------------------------------ reading


def member(folder: Path, name: object) -> Path:
    """The path of bundle file `name`: a relative path of plain components, every one of them a
    real folder or (the last) a regular file; a symlink, device, FIFO or `..` is refused by name."""
    parts = _parts(folder, name)
    path = folder
    for i, part in enumerate(parts):
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            raise InputError(f"{folder}: bundle has no {name}") from None
        last = i == len(parts) - 1
        if stat.S_ISLNK(mode):
            raise InputError(f"{folder}: bundle file {name} is a symlink; a bundle holds only regular files")
        if (last and not stat.S_ISREG(mode)) or (not last and not stat.S_ISDIR(mode)):
            raise InputError(f"{folder}: bundle file {name} is not a regular file; refused")
    return path


def read_bytes(folder: Path, name: str) -> bytes:
    path = member(folder, name)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise InputError(f"{folder}: bundle file {name} is not a regular file; refused")
        data = f.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        raise InputError(f"{folder}: bundle file {name} is larger than {MAX_FILE} bytes; refused")
    return data


def read_json(folder: Path, name: str) -> Any:
    data = read_bytes(folder, name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{folder / name}: not UTF-8 text") from None
    return jsonio.loads(text, str(folder / name))


def read_object(folder: Path, name: str) -> dict[str, Any]:
    data = read_json(folder, name)
    if not isinstance(data, dict):
        raise InputError(f"{folder / name}: expected a JSON object, found {type(data).__name__}")
    return data


def read_verdict(folder: Path) -> dict[str, Any]:
    return read_object(folder, "verdict.json")


def _present(folder: Path) -> set[str]:
    """Every file under the folder, relative; anything but folders and regular files is refused."""
    found: set[str] = set()
    for here, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(here) / name
            mode = os.lstat(path).st_mode
            rel = path.relative_to(folder).as_posix()
            if stat.S_ISLNK(mode):
                raise InputError(f"{folder}: bundle tampered: {rel} is a symlink; a bundle holds only regular files")
            if stat.S_ISREG(mode):
                found.add(rel)
            elif not stat.S_ISDIR(mode):
                raise InputError(f"{folder}: bundle tampered: {rel} is not a regular file")
        if len(found) > MAX_FILES:
            raise InputError(f"{folder}: more than {MAX_FILES} files; not an evidence bundle")
    return found - set(SEAL_FILES) - set(DERIVED)


def manifest_files(folder: Path) -> dict[str, str]:
    """The manifest's {file: digest}, checked for shape."""
    data = read_object(folder, MANIFEST)
    files = data.get("files")
    if not isinstance(files, dict) or not all(isinstance(d, str) and _DIGEST.fullmatch(d) for d in files.values()):
        raise InputError(f"{folder / MANIFEST}: bundle tampered: the manifest is not valid")
    for name in files:
        if name in SEAL_FILES or name in DERIVED:
            raise InputError(f"{folder / MANIFEST}: bundle tampered: the manifest lists {name}")
        _parts(folder, name)
    return files


def _parts(folder: Path, name: object) -> tuple[str, ...]:
    """The components of a bundle file name: plain names only, so nothing can leave the folder."""
    parts = PurePosixPath(name).parts if isinstance(name, str) else ()
    if not parts or str(name).startswith("/") or not all(_MEMBER.fullmatch(p) for p in parts) or ".." in str(name):
        raise InputError(f"{folder}: bundle file {name!r} is not a plain path inside the bundle; refused")
    return parts


def verify_bundle(folder: Path) -> str:
    """The bundle's digest, after checking every file against the manifest; tampering raises."""
    try:
        if not stat.S_ISREG(os.lstat(folder / MANIFEST).st_mode):
            raise FileNotFoundError
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"{folder}: not a sealed evidence bundle (no {MANIFEST}); was the run interrupted?") from None
    listed = manifest_files(folder)
    present = _present(folder)
    for name in sorted(set(listed) | present):
        if name not in listed:
            raise InputError(f"{folder}: bundle tampered: {name} is not in the manifest")
        if name not in present:
            raise InputError(f"{folder}: bundle tampered: {name} is missing")
        if digest_bytes(read_bytes(folder, name)) != listed[name]:
            raise InputError(f"{folder}: bundle tampered: {name} digest mismatch")
    return digest_bytes(read_bytes(folder, MANIFEST))


# ------------------------------------------------------------------ signing


def sign(folder: Path, key: Ed25519PrivateKey) -> str:
    """Write SIGNATURE.json: a DSSE envelope of the in-toto statement over the bundle's files and
    MANIFEST.json; returns the key's fingerprint. MANIFEST.json is not rewritten."""
    stmt = attestation.statement(_sealed(folder), _predicate(folder))
    atomic_write(folder / SIGNATURE, dumps(attestation.envelope(stmt, key)))
    return fingerprint(key.public_key())


def _sealed(folder: Path) -> dict[str, str]:
    """What the statement's subjects must be: every file the manifest lists, and the manifest."""
    return {**manifest_files(folder), MANIFEST: digest_bytes(read_bytes(folder, MANIFEST))}


def _predicate(folder: Path) -> dict[str, Any]:
    """The statement's predicate from verdict.json and inputs.json; a file that is missing or not an
    object gives None (judge refuses such a bundle; its signature can still say what it holds)."""
    listed = manifest_files(folder)

    def record(name: str) -> dict[str, Any] | None:
        data = read_json(folder, name) if name in listed else None
        return data if isinstance(data, dict) else None

    return attestation.predicate(record("verdict.json"), record("inputs.json"))


def signer(folder: Path) -> str | None:
    """The fingerprint of the key whose valid signature covers the bundle; None when unsigned.
    A signature that does not verify, or an attestation whose subjects are not exactly the bundle's
    files with their digests, raises: it is tampering, not absence."""
    try:
        os.lstat(folder / SIGNATURE)
    except FileNotFoundError:
        return None
    record = read_object(folder, SIGNATURE)
    if attestation.is_envelope(record):
        return _attested_signer(folder, record)
    return _legacy_signer(folder, record)


def _attested_signer(folder: Path, record: dict[str, Any]) -> str:
    where = folder / SIGNATURE
    attested = attestation.open_envelope(record, str(where))
    verify_bundle(folder)  # the files are what the manifest lists, so subjects == manifest == files
    sealed = _sealed(folder)
    # the files first: a changed file changes MANIFEST.json too, and the file is the news
    for name in [*sorted((set(sealed) | set(attested.subjects)) - {MANIFEST}), MANIFEST]:
        if name not in attested.subjects:
            detail = f"{name} is sealed but not attested"
        elif name not in sealed:
            detail = f"{name} is attested but not sealed"
        elif sealed[name] != attested.subjects[name]:
            detail = f"{name} is attested as {attested.subjects[name]}, sealed as {sealed[name]}"
        else:
            continue
        raise InputError(f"{where}: bundle tampered: the signature does not match MANIFEST.json ({detail})")
    if attested.predicate != _predicate(folder):
        raise InputError(f"{where}: bundle tampered: the attested verdict or inputs are not the bundle's")
    return attested.signer


def _legacy_signer(folder: Path, record: dict[str, Any]) -> str:
    """A signature record from before issue 32: ed25519 over the exact bytes of MANIFEST.json."""
    where = folder / SIGNATURE
    try:
        raw = base64.b64decode(str(record.get("public_key")), validate=True)
        signature = base64.b64decode(str(record.get("signature")), validate=True)
        public = Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise InputError(f"{where}: bundle tampered: the signature record is not valid") from None
    if record.get("algorithm") != "ed25519" or record.get("key") != fingerprint(public):
        raise InputError(f"{where}: bundle tampered: the signature names another key than it holds")
    try:
        public.verify(signature, read_bytes(folder, MANIFEST))
    except InvalidSignature:
        raise InputError(f"{where}: bundle tampered: the signature does not match MANIFEST.json") from None
    return fingerprint(public)


def check_trusted(folder: Path, trusted: frozenset[str]) -> str:
    """The signer's fingerprint when it is trusted; a one-line refusal otherwise."""
    who = signer(folder)
    if who is None:
        raise InputError(f"{folder}: the bundle is not signed; only bundles signed by a trusted validator key "
                         "are admitted (validate it again in CI)")
    if who not in trusted:
        raise InputError(f"{folder}: signed by {who}, which is not a trusted validator key (see [trust] in "
                         "faultkit.toml or --trust)")
    return who


# ------------------------------------------------------------------ writing


def _root_of(folder: Path) -> Path | None:
    try:
        return Workspace.find(folder).root
    except UsageError:
        return None


class BundleWriter:
    """Writes a bundle's files as the run goes (an interrupted run keeps what it had), then seals."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / ".writable"
            probe.write_text("")
            probe.unlink()
        except OSError as e:
            raise InputError(f"{folder}: evidence folder is not writable ({e.strerror}); pass --evidence DIR") from None

    def write(self, name: str, data: Any) -> Path:
        path = self.folder / name
        atomic_write(path, dumps(data))
        return path

    def write_text(self, name: str, text: str) -> Path:
        path = self.folder / name
        atomic_write(path, text)
        return path

    def seal(self) -> str:
        """Write MANIFEST.json and sign it with the validator's key; returns the bundle digest."""
        files = {
            p.relative_to(self.folder).as_posix(): sha256_file(p)
            for p in sorted(self.folder.rglob("*"))
            if p.is_file() and p.name not in SEAL_FILES and p.relative_to(self.folder).as_posix() not in DERIVED
        }
        atomic_write(self.folder / MANIFEST, dumps({"files": files}))
        try:
            sign(self.folder, signing_key(_root_of(self.folder)))
        except FaultkitError:
            (self.folder / SIGNATURE).unlink(missing_ok=True)
            raise
        return sha256_file(self.folder / MANIFEST)
