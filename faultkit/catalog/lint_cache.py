"""The lint cache: each file's findings and facts, addressed by everything they depend on (issue 20).

A file's key is sha256 over the environment digest (toolkit version, entry schema, the source of
the rule set, faultkit.toml, every app descriptor, its manifests and its observed graph) and the
file's name and content digest. A result also names the other files it read (a code fault's patch) with their
digests, and counts only while they still match. Results of one environment live in one pack,
`lint-<environment>.json`, so a warm run reads one file: written to a temporary path and moved
into place with os.replace, under a lock that merges what a concurrent run wrote. Every key is a
content address, so a lost race costs a cache miss, never a wrong answer. The cache folder keeps
a `.gitignore` of its own (as ruff's does), so no repository has to know about it.

A pull request can commit a cache folder (issue 32): a pack with a leaky entry's findings emptied
would make lint pass it, and a `.faultkit_cache` symlink would make lint write outside the
repository. So every pack and side file carries an HMAC under a per-user secret kept outside any
repository (`lint-cache.key` in FAULTKIT_CACHE_HOME, else $XDG_CACHE_HOME/faultkit, else
~/.cache/faultkit): a file this user's faultkit did not write is a miss, never an answer. A cache
folder that is a symlink is not used (the per-user cache folder serves instead), and the lock is
opened without following links; writes replace files, never write through them.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import faultkit
from faultkit.catalog.rules.records import Facts, Finding
from faultkit.errors import InputError
from faultkit.safeio import read_regular
from faultkit.workspace import Workspace

CACHE_DIR = ".faultkit_cache"
FORMAT = "faultkit/lint-cache/v1"
KEY_FILE = "lint-cache.key"
_MAC = b',"mac":"'  # a pack's last member: the HMAC of every byte before it
# the modules whose code decides a file's result, besides the rules themselves
_SOURCES = ("catalog/lint.py", "catalog/lint_cache.py", "catalog/model.py", "catalog/config_rules.py",
            "catalog/vocab.py", "catalog/patches.py", "catalog/placeholders.py", "apps/descriptor.py",
            "apps/manifests.py", "apps/observed_graph.py", "schema.py", "yamlio.py")
# apps/observed_graph.py's OBSERVED_FILE, named here so that a warm run need not import it (and YAML)
OBSERVED_FILE = "observed-graph.yaml"


@dataclass(frozen=True)
class FileLint:
    """One file's result, before --strict (which is applied on top, so one result serves both)."""

    findings: tuple[Finding, ...]
    facts: Facts | None  # None when the file is not a valid entry
    deps: tuple[tuple[str, str], ...] = ()  # (workspace-relative path, digest) of other files it read

    def to_json(self) -> dict[str, Any]:
        f = self.facts  # written out by hand: dataclasses.asdict is slow over a thousand files
        facts = {"file": f.file, "id": f.id, "app": f.app, "change": list(f.change), "artifact": f.artifact,
                 "patch": f.patch} if f else None
        return {"findings": [[x.file, x.line, x.path, x.message, x.severity, x.rule] for x in self.findings],
                "deps": [list(d) for d in self.deps], "facts": facts}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> FileLint:
        f = d["facts"]
        facts = Facts(**{**f, "change": tuple(f["change"])}) if f else None
        return cls(tuple(Finding(*x) for x in d["findings"]), facts, tuple((p, h) for p, h in d["deps"]))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str:
    """The digest of a file's bytes, or "-" when it cannot be read (the result says why)."""
    data = read_regular(path)  # never opens a FIFO or a device (issue 32)
    return "-" if data is None else digest(data)


def environment(workspace: Workspace, rules: Iterable[str], sources: Iterable[Path]) -> str:
    """The digest of everything but the file itself that a file's lint result depends on."""
    h = hashlib.sha256()

    def part(name: str, data: bytes) -> None:
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)

    part("format", FORMAT.encode())
    part("version", faultkit.__version__.encode())
    part("schema", entry_schema())
    part("schema:app", resources.files("faultkit.schemas").joinpath("app.schema.json").read_bytes())
    part("rules", " ".join(rules).encode())
    package = Path(faultkit.__file__).parent
    for src in sorted({*(package / s for s in _SOURCES), *sources}):
        part(f"source:{src.relative_to(package) if src.is_relative_to(package) else src}", _bytes(src))
    part("faultkit.toml", _bytes(workspace.root / "faultkit.toml"))
    for app in sorted(workspace.apps_dir.glob("*/app.yaml")) if workspace.apps_dir.is_dir() else ():
        part(f"app:{app.parent.name}", _bytes(app))
        part(f"observed:{app.parent.name}", _bytes(app.parent / OBSERVED_FILE))
        for manifest in _manifest_files(app):
            part(f"manifest:{app.parent.name}:{manifest.name}", _bytes(manifest))
    return h.hexdigest()


def entry_schema() -> bytes:
    """The entry schema's bytes, read without importing faultkit.schema (and its validator)."""
    return resources.files("faultkit.schemas").joinpath("entry.schema.json").read_bytes()


def _manifest_files(app: Path) -> list[Path]:
    """The files load_manifests reads for this descriptor (its `manifests:` folder)."""
    folder = app.parent / _manifests_key(app)
    return sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]) if folder.is_dir() else []


_TOP_KEY = re.compile(r"^manifests:[ \t]*(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s#'\"][^#\n]*?))?[ \t]*(?:#.*)?$", re.M)


def _manifests_key(app: Path) -> str:
    """The descriptor's `manifests:` value. A block-style top-level key is read with a regular
    expression, so a warm run need not import YAML; any other form is left to the YAML parser."""
    try:
        text = (read_regular(app) or b"").decode("utf-8")
    except UnicodeDecodeError:
        return "manifests"  # the descriptor's own bytes are in the key; lint reports what is wrong
    found = _TOP_KEY.search(text)
    if found and any(g for g in found.groups()):
        return next(g for g in found.groups() if g)
    if "manifests" not in text:
        return "manifests"  # the loader's default
    import yaml

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return "manifests"
    value = data.get("manifests", "manifests") if isinstance(data, dict) else None
    return value if isinstance(value, str) else "manifests"


def _bytes(path: Path) -> bytes:
    data = read_regular(path)  # never opens a FIFO or a device (issue 32)
    return b"\0absent" if data is None else data


def file_key(env: str, name: str, content: bytes) -> str:
    return key_of(env, name, digest(content))


def key_of(env: str, name: str, content_digest: str) -> str:
    return digest(f"{env}\0{name}\0{content_digest}".encode())


# A file whose status changed this recently may change again within the same clock tick without its
# status showing it, so its digest is remembered only once it is older than this (git's "racy clean").
SETTLED_NS = 2_000_000_000


def stat_of(st: os.stat_result) -> list[int]:
    """What tells one version of a file from another without reading it: any write moves ctime."""
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def cache_home(environ: Mapping[str, str] = os.environ) -> Path:
    """The user's cache folder: $FAULTKIT_CACHE_HOME, else $XDG_CACHE_HOME/faultkit, else ~/.cache/faultkit."""
    if environ.get("FAULTKIT_CACHE_HOME"):
        return Path(environ["FAULTKIT_CACHE_HOME"])
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "faultkit"


def mac_key(environ: Mapping[str, str] = os.environ) -> bytes | None:
    """This user's secret for the cache's HMACs, made on first use (mode 0600); None when the cache
    folder cannot hold one (then nothing is cached)."""
    path = cache_home(environ) / KEY_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(32))
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            key = f.read(64)
    except OSError:
        return None
    return key if len(key) == 32 else None


def sealed(key: bytes, body: bytes) -> bytes:
    """`body` (a JSON object's bytes) with its HMAC as its last member."""
    mac = hmac.new(key, body[:-1], hashlib.sha256).hexdigest().encode()
    return body[:-1] + _MAC + mac + b'"}'


def unsealed(key: bytes | None, data: bytes) -> bytes | None:
    """The JSON object's bytes without its HMAC, when the HMAC is this user's; None otherwise."""
    cut = data.rfind(_MAC)
    if key is None or cut < 0 or not data.endswith(b'"}'):
        return None
    mac = data[cut + len(_MAC):-2]
    if not hmac.compare_digest(mac, hmac.new(key, data[:cut], hashlib.sha256).hexdigest().encode()):
        return None
    return data[:cut] + b"}"


def parse(path: Path, body: bytes) -> Any:
    """JSON from the cache; nesting too deep for the parser is a one-line error, not a crash."""
    try:
        return json.loads(body)
    except RecursionError:
        raise InputError(f"{path}: the lint cache's file is nested too deeply to read; delete it "
                         "(or run with --no-cache)") from None


class Store:
    """The cache folder (`.faultkit_cache/` at the workspace root unless FAULTKIT_CACHE_DIR says).
    Only files sealed with this user's key (mac_key) are read."""

    def __init__(self, directory: Path, key: bytes | None | bool = True,
                 environ: Mapping[str, str] = os.environ) -> None:
        self.directory = directory
        self.key: bytes | None = mac_key(environ) if key is True else (key or None)

    @classmethod
    def default(cls, workspace: Workspace, environ: Mapping[str, str] = os.environ) -> Store:
        if environ.get("FAULTKIT_CACHE_DIR"):
            return cls(Path(environ["FAULTKIT_CACHE_DIR"]), environ=environ)
        here = workspace.root / CACHE_DIR
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            # committed to point elsewhere: the user's own cache folder serves this repository instead
            name = hashlib.sha256(str(workspace.root).encode()).hexdigest()[:32]
            return cls(cache_home(environ) / "lint" / name, environ=environ)
        return cls(here, environ=environ)

    def pack(self, env: str) -> Pack:
        path = self._path(env)
        stamp = _stamp(path)
        body = self._body(path)
        return Pack(self, env, body.get("results", {}), stamp, body.get("stats", {}))

    def _path(self, env: str) -> Path:
        return self.directory / f"lint-{env[:32]}.json"

    def _read(self, path: Path) -> Any:
        """A sealed file's JSON, or None when absent, unreadable or not sealed by this user."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                data = f.read()
        except OSError:
            return None
        body = unsealed(self.key, data)
        if body is None:
            return None
        try:
            return parse(path, body)
        except ValueError:
            return None

    def _body(self, path: Path) -> dict[str, Any]:
        data = self._read(path)  # no pack yet, one a crash left unreadable or a foreign one: only misses
        ok = isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("results"), dict)
        if ok and not isinstance(data.get("stats", {}), dict):
            data["stats"] = {}
        return data if ok else {}

    def read_json(self, name: str) -> Any:
        """A side file of the cache (parsed manifests), or None when absent or unreadable."""
        data = self._read(self.directory / name)
        return data.get("data") if isinstance(data, dict) else None

    def write_json(self, name: str, data: Any) -> None:
        if self.key is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            body = json.dumps({"data": data}, sort_keys=True, separators=(",", ":")).encode()
            _write(self.directory / name, sealed(self.key, body))
        except OSError:
            pass  # only a miss next time

    def write(self, env: str, new: Mapping[str, dict[str, Any]], used: set[str],
              known: tuple[dict[str, Any], tuple[int, ...] | None] = ({}, None),
              stats: Mapping[str, list[Any]] | None = None) -> None:
        """Merge `new` results (and file statuses) into the pack under the lock; drop results this run
        did not use once stale ones outnumber the live ones (old versions of edited files)."""
        if self.key is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                _write(ignore, b"# written by faultkit: the lint cache is never committed\n*\n")
            fd = os.open(self.directory / "lock", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
                path = self._path(env)
                # the pack as this run read it, unless another run has replaced it since
                base = known[0] if known[1] is not None and _stamp(path) == known[1] else self._body(path)
                results = {**base.get("results", {}), **new}
                if len(results) > 2 * len(used):
                    results = {k: v for k, v in results.items() if k in used}
                body = {"format": FORMAT, "environment": env, "results": results,
                        "stats": {**base.get("stats", {}), **(stats or {})}}
                _write(path, sealed(self.key, json.dumps(body, sort_keys=True, separators=(",", ":")).encode()))
                for other in [*self.directory.glob("lint-*.json"), *self.directory.glob("app-*.json")]:
                    if other != path and not other.name.startswith(f"app-{env[:32]}-"):
                        other.unlink(missing_ok=True)  # another environment's: no longer valid
        except OSError:
            pass  # a cache that cannot be written only makes the next run slower


def _stamp(path: Path) -> tuple[int, ...] | None:
    """What tells one version of a pack from another: os.replace gives every new one a new inode."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _write(path: Path, data: bytes) -> None:
    """Write beside `path`, then os.replace: a reader sees the old pack or the new, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Pack:
    """The results of one environment, as read at the start of a run, plus this run's new ones.

    It also remembers each settled file's status and content digest, so a warm run stats a file
    instead of reading and hashing it; a file whose status differs in any way is read afresh."""

    def __init__(self, store: Store, env: str, results: dict[str, dict[str, Any]],
                 stamp: tuple[int, ...] | None = None, stats: dict[str, list[Any]] | None = None) -> None:
        self.store, self.env = store, env
        self._results = results
        self._stamp = stamp
        self._stats = stats or {}
        self._new: dict[str, dict[str, Any]] = {}
        self._new_stats: dict[str, list[Any]] = {}
        self._used: set[str] = set()

    def get(self, key: str) -> FileLint | None:
        raw = self._results.get(key)
        if raw is None:
            return None
        try:
            result = FileLint.from_json(raw)
        except (KeyError, TypeError, ValueError):
            return None
        self._used.add(key)
        return result

    def put(self, key: str, result: FileLint) -> None:
        self._new[key] = result.to_json()
        self._used.add(key)

    def known_digest(self, name: str, status: list[int]) -> str | None:
        """The content digest of `name` when it was last read with exactly this status."""
        seen = self._stats.get(name)
        if isinstance(seen, list) and len(seen) == 5 and seen[:4] == status and isinstance(seen[4], str):
            return seen[4]
        return None

    def remember(self, name: str, status: list[int], content_digest: str, now_ns: int) -> None:
        if now_ns - status[3] >= SETTLED_NS and self._stats.get(name) != [*status, content_digest]:
            self._new_stats[name] = [*status, content_digest]

    def save(self) -> None:
        if self._new or self._new_stats:
            body = {"results": self._results, "stats": self._stats}
            self.store.write(self.env, self._new, self._used, (body, self._stamp), self._new_stats)
