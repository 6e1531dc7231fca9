"""The validator's ed25519 keys: where the private key lives, fingerprints, and the trusted list.

The private key never lives in a catalog repository (pull requests could read or replace it): it
is a file named by FAULTKIT_KEY or `[validator] key` in faultkit.toml, outside the repository, or
a per-user key made on first use under the user's config folder (FAULTKIT_CONFIG_DIR, else
$XDG_CONFIG_HOME/faultkit, else ~/.config/faultkit). Public keys and fingerprints may be committed.

Who is trusted must not be decided by the change under review (issue 32): a pull request could add
its own key to [trust] and sign its own evidence. So the trust anchors can be read from a git
revision (`trusted_at`: faultkit.toml and the key files as committed there, e.g. the pull request's
base) or from a file the user names outside the repository (`trusted_file`, FAULTKIT_TRUST_CONFIG);
`anchors` picks one: that file, else the revision, else the working tree (a maintainer's own checkout).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from faultkit.errors import InputError
from faultkit.names import safe_path
from faultkit.process import run
from faultkit.tomlio import load_toml, parse_toml, table
from faultkit.yamlio import atomic_write, read_text

CONFIG_FILE = "faultkit.toml"
DEFAULT_KEY = "validator.key"
FINGERPRINT_PREFIX = "ed25519:"
TRUST_ENV = "FAULTKIT_TRUST_CONFIG"  # a TOML file with a [trust] table, outside the repository


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
    return public_from_text(read_text(path, 64 * 1024), str(path))


def public_from_text(text: str, where: str) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(text.encode())
    except (ValueError, TypeError, UnsupportedAlgorithm) as e:
        raise InputError(f"{where}: not a PEM public key ({e}); pass the validator's .pub file") from None
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(f"{where}: not an ed25519 public key; pass the validator's .pub file")
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


def signing_key(root: Path | None, environ: Mapping[str, str] = os.environ) -> Ed25519PrivateKey:
    """The key the validator signs with: FAULTKIT_KEY, else faultkit.toml's [validator] key, else the
    per-user default, made on first use. A key inside the repository is refused."""
    named = environ.get("FAULTKIT_KEY")
    path = Path(named).expanduser() if named else config_dir(environ) / DEFAULT_KEY
    if not named:
        configured = table(_toml(root), "validator", CONFIG_FILE).get("key")
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


def _listed(data: dict, where: str, key_file: Callable[[str], Ed25519PublicKey] | None) -> set[str] | None:
    """The fingerprints of a parsed faultkit.toml's `[trust] keys`; None when it has no list."""
    listed = table(data, "trust", where).get("keys")
    if listed is None:
        return None
    if not isinstance(listed, list) or not all(isinstance(k, str) for k in listed):
        raise InputError(f"{where}: trust.keys must be a list of fingerprints or public key files")
    found = set()
    for item in listed:
        if item.startswith(FINGERPRINT_PREFIX):
            found.add(item)
        elif key_file is None:
            raise InputError(f"trust.keys: {item!r} is a file, but there is no repository to find it in")
        else:
            found.add(fingerprint(key_file(item)))
    return found


def _with(files: Iterable[Path], listed: set[str] | None) -> frozenset[str] | None:
    found = {fingerprint(load_public(p)) for p in files}
    if listed is None:
        return frozenset(found) if found else None
    return frozenset(found | listed)


def trusted(root: Path | None, files: Iterable[Path] = ()) -> frozenset[str] | None:
    """Fingerprints admitted as validators: the given public key files, plus faultkit.toml's
    `[trust] keys` (fingerprints or public key files relative to the repository). None: no list."""
    def key_file(item: str) -> Ed25519PublicKey:
        assert root is not None
        return load_public(safe_path(root, item, "trust.keys"))

    return _with(files, _listed(_toml(root), CONFIG_FILE, key_file if root is not None else None))


def committed_text(root: Path, revision: str, name: str) -> str | None:
    """The text of `name` (relative to the workspace) as committed at `revision`; None when absent."""
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise InputError(f"trust.keys: {name!r} is not a plain path inside the repository")
    prefix = run(["git", "rev-parse", "--show-prefix"], cwd=root, timeout=60)
    if not prefix.ok:
        raise InputError(f"{root}: not a git repository; trust anchors from a revision need one")
    spec = f"{revision}:{prefix.output.strip()}{rel.as_posix()}"
    found = run(["git", "cat-file", "blob", spec], cwd=root, timeout=60)
    return found.output if found.ok else None


def trusted_at(root: Path, revision: str, files: Iterable[Path] = ()) -> frozenset[str] | None:
    """The trust anchors as committed at `revision` (faultkit.toml's [trust] and the key files it
    names, read from git, never from the working tree), plus the given key files. None: no list."""
    if revision.startswith("-") or not run(["git", "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
                                           cwd=root, timeout=60).ok:
        raise InputError(f"{revision!r} is not a commit of {root}; fetch it first (the trust anchors are read there)")
    where = f"{revision}:{CONFIG_FILE}"

    def key_file(item: str) -> Ed25519PublicKey:
        text = committed_text(root, revision, item)
        if text is None:
            raise InputError(f"{where}: trust.keys names {item!r}, which {revision} does not hold")
        return public_from_text(text, f"{revision}:{item}")

    text = committed_text(root, revision, CONFIG_FILE)
    return _with(files, _listed(parse_toml(text, where), where, key_file) if text is not None else None)


def trusted_file(path: Path, root: Path | None, files: Iterable[Path] = ()) -> frozenset[str]:
    """The trust anchors of a TOML file the user keeps outside the repository (key files relative to
    it), plus the given key files. One inside the repository is refused: a pull request could edit it."""
    if root is not None and path.resolve().is_relative_to(root.resolve()):
        raise InputError(f"{path}: the trust anchors are inside the repository, where a pull request can "
                         "change them; keep the file outside it")
    where = str(path)
    listed = _listed(load_toml(path), where,
                     lambda item: load_public(safe_path(path.parent, item, "trust.keys")))
    if listed is None:
        raise InputError(f"{path}: no [trust] keys list; add one (keys = [\"ed25519:...\"])")
    return frozenset({*listed, *(fingerprint(load_public(p)) for p in files)})


def anchors(root: Path | None, files: Iterable[Path] = (), base: str | None = None, config: Path | None = None,
            environ: Mapping[str, str] = os.environ) -> frozenset[str]:
    """The trusted fingerprints: from `config` (or FAULTKIT_TRUST_CONFIG), else as committed at `base`,
    else the working tree's faultkit.toml; with no list anywhere, this user's own validator key."""
    files = tuple(files)
    config = config or (Path(environ[TRUST_ENV]).expanduser() if environ.get(TRUST_ENV) else None)
    if config is not None:
        return trusted_file(config, root, files)
    if base is not None and root is not None:
        keys = trusted_at(root, base, files)
        return keys if keys is not None else frozenset({fingerprint(signing_key(root, environ).public_key())})
    return trusted_or_own(root, files, environ)


def trusted_or_own(root: Path | None, files: Iterable[Path] = (),
                   environ: Mapping[str, str] = os.environ) -> frozenset[str]:
    """The trusted fingerprints; with neither files nor a [trust] list, this user's own validator key:
    a local catalog admits what its own validator observed."""
    keys = trusted(root, files)
    return keys if keys is not None else frozenset({fingerprint(signing_key(root, environ).public_key())})
