"""The validator's ed25519 keys: where the private key lives, fingerprints, and the trusted list.

The private key never lives in a catalog repository (pull requests could read or replace it): it
is a file named by FAULTKIT_KEY or `[validator] key` in faultkit.toml, outside the repository, or
a per-user key made on first use under the user's config folder (FAULTKIT_CONFIG_DIR, else
$XDG_CONFIG_HOME/faultkit, else ~/.config/faultkit). Public keys and fingerprints may be committed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from faultkit.errors import InputError
from faultkit.names import safe_path
from faultkit.tomlio import load_toml, table
from faultkit.yamlio import atomic_write, read_text

CONFIG_FILE = "faultkit.toml"
DEFAULT_KEY = "validator.key"
FINGERPRINT_PREFIX = "ed25519:"


def config_dir(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get("FAULTKIT_CONFIG_DIR"):
        return Path(environ["FAULTKIT_CONFIG_DIR"])
    base = Path(environ["XDG_CONFIG_HOME"]) if environ.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "faultkit"


def fingerprint(public: Ed25519PublicKey) -> str:
    """`ed25519:<sha256 of the raw 32-byte public key>`: what the trusted list and a bundle name."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return FINGERPRINT_PREFIX + hashlib.sha256(raw).hexdigest()


def public_pem(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def load_private(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(read_text(path, 64 * 1024).encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as e:
        raise InputError(f"{path}: not an unencrypted PEM private key ({e}); make one with "
                         "`openssl genpkey -algorithm ed25519`") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(f"{path}: not an ed25519 key; make one with `openssl genpkey -algorithm ed25519`")
    return key


def load_public(path: Path) -> Ed25519PublicKey:
    text = read_text(path, 64 * 1024)
    try:
        key = serialization.load_pem_public_key(text.encode())
    except (ValueError, TypeError, UnsupportedAlgorithm) as e:
        raise InputError(f"{path}: not a PEM public key ({e}); pass the validator's .pub file") from None
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(f"{path}: not an ed25519 public key; pass the validator's .pub file")
    return key


def generate(path: Path) -> Ed25519PrivateKey:
    """A new key at `path` (mode 0600) with its public half beside it as `<path>.pub`."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(path, pem)
    path.chmod(0o600)
    atomic_write(path.with_name(path.name + ".pub"), public_pem(key))
    return key


def _toml(root: Path | None) -> dict:
    return load_toml(root / CONFIG_FILE) if root else {}


def _table(root: Path | None, name: str) -> dict:
    return table(_toml(root), name, CONFIG_FILE)


def signing_key(root: Path | None, environ: Mapping[str, str] = os.environ) -> Ed25519PrivateKey:
    """The key the validator signs with: FAULTKIT_KEY, else faultkit.toml's [validator] key, else the
    per-user default, made on first use. A key inside the repository is refused."""
    named = environ.get("FAULTKIT_KEY")
    path = Path(named).expanduser() if named else config_dir(environ) / DEFAULT_KEY
    if not named:
        configured = _table(root, "validator").get("key")
        if configured is not None and not isinstance(configured, str):
            raise InputError(f"{CONFIG_FILE}: validator.key must be a path")
        if configured:
            named, path = configured, Path(configured).expanduser()
            path = path if path.is_absolute() or root is None else root / path  # relative to the repository
    if root is not None and path.resolve().is_relative_to(root.resolve()):
        raise InputError(f"{path}: the validator's private key is inside the repository, where a pull request "
                         "can read or replace it; keep it under ~/.config/faultkit or a CI secret")
    if named:
        return load_private(path)
    return load_private(path) if path.exists() else generate(path)


def trusted(root: Path | None, files: Iterable[Path] = ()) -> frozenset[str] | None:
    """Fingerprints admitted as validators: the given public key files, plus faultkit.toml's
    `[trust] keys` (fingerprints or public key files relative to the repository). None: no list."""
    found = {fingerprint(load_public(p)) for p in files}
    listed = _table(root, "trust").get("keys")
    if listed is None:
        return frozenset(found) if found else None
    if not isinstance(listed, list) or not all(isinstance(k, str) for k in listed):
        raise InputError(f"{CONFIG_FILE}: trust.keys must be a list of fingerprints or public key files")
    for item in listed:
        if item.startswith(FINGERPRINT_PREFIX):
            found.add(item)
        else:
            if root is None:
                raise InputError(f"trust.keys: {item!r} is a file, but there is no repository to find it in")
            found.add(fingerprint(load_public(safe_path(root, item, "trust.keys"))))
    return frozenset(found)


def trusted_or_own(root: Path | None, files: Iterable[Path] = (),
                   environ: Mapping[str, str] = os.environ) -> frozenset[str]:
    """The trusted fingerprints; with neither files nor a [trust] list, this user's own validator key:
    a local catalog admits what its own validator observed."""
    keys = trusted(root, files)
    return keys if keys is not None else frozenset({fingerprint(signing_key(root, environ).public_key())})
