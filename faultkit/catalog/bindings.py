"""What a verdict measured, besides the entry and its patch (issue 32): the digests a bundle seals in
inputs.json `bindings`, and that `catalog build` recomputes from the release's own checkout.

- descriptor: the app's app.yaml, byte for byte (services, graph, build commands, upstream pin);
- source: the target service's pinned source folder, file by file (names, modes, bytes; caches such
  as __pycache__ left out, links recorded as links, never followed), else the descriptor's upstream
  pin (repository, version, commit), which also stands for an upstream app's source read from the
  user's checkout outside the repository (Bank of Anthos'), else "none";
- build: the service checks the build stage ran (`build.lint` and `build.test` of the descriptor);
- rules: faultkit.toml's rule settings, every table but [trust] and [validator] (so [leakage] too).

A bundle sealed before these existed has no `bindings`; it is bound to its entry and patch only,
and the release says which bindings each entry has.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.bundles import read_object
from faultkit.catalog.model import Entry
from faultkit.catalog.patches import safe_path
from faultkit.errors import InputError
from faultkit.workspace import Workspace
from faultkit.yamlio import canonical_json, read_text

KINDS = ("descriptor", "source", "build", "rules")
SKIPPED = frozenset({"__pycache__"})  # and .*_cache folders: what the build stage's copy leaves out
NOT_RULES = ("trust", "validator")  # who is trusted and who signs: not what a rule measures


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def tree_digest(folder: Path) -> str:
    """Every file under `folder` by relative name, mode and content (links by their target)."""
    h = hashlib.sha256()
    for here, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not (d.startswith(".") and d.endswith("_cache")))
        for name in sorted(files):
            if name.endswith(".pyc"):
                continue
            path = Path(here) / name
            st = os.lstat(path)
            rel = path.relative_to(folder).as_posix()
            if stat.S_ISLNK(st.st_mode):
                body = b"link:" + os.readlink(path).encode()
            elif stat.S_ISREG(st.st_mode):
                body = path.read_bytes()
            else:
                body = b"special"
            h.update(f"{rel}\0{st.st_mode & 0o111:o}\0{len(body)}\0".encode() + body)
    return "sha256:" + h.hexdigest()


def source_digest(app: AppDescriptor, service: str) -> str:
    """The tree of the service's source where this repository holds it; an app derived from upstream
    whose source is the user's own checkout (linked from outside, or absent) is bound by its pin, the
    one thing every checkout of the catalog can recompute."""
    rel = app.service_source(service) if service in app.service_names else None
    folder = app.root / rel if rel else None
    held = folder is not None and folder.resolve().is_relative_to(app.root.resolve())
    if folder is not None and folder.is_dir() and not folder.is_symlink() and (held or app.upstream is None):
        return "tree:" + tree_digest(folder)
    if app.upstream is not None:
        pin = {k: str(v) for k, v in vars(app.upstream).items() if k in ("repository", "version", "commit")}
        return "upstream:" + _digest(canonical_json(pin).encode())
    return "none"


def rule_settings(root: Path) -> dict[str, Any]:
    path = root / "faultkit.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(read_text(path, 256 * 1024))
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML ({e})") from None
    return {k: v for k, v in data.items() if k not in NOT_RULES}


def bindings(workspace: Workspace, entry: Entry) -> dict[str, str]:
    """The digests of what a validation of `entry` here would measure, by kind."""
    app = load_app(workspace, entry.app)
    descriptor = (workspace.apps_dir / entry.app / "app.yaml").read_bytes()
    lint, test = app.checks(entry.target.service)
    build = {"lint": list(lint), "test": list(test)}
    return {
        "descriptor": _digest(descriptor),
        "source": source_digest(app, entry.target.service),
        "build": _digest(canonical_json(build).encode()),
        "rules": _digest(canonical_json(rule_settings(workspace.root)).encode()),
    }


def mismatches(sealed: object, current: dict[str, str]) -> list[str]:
    """The kinds whose sealed digest differs from the current one (kinds not sealed are not bound)."""
    if not isinstance(sealed, dict):
        return []
    return [k for k in KINDS if k in sealed and sealed[k] != current.get(k)]


def _same(a: object, b: object) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return float(a) == float(b)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return list(a) == list(b)
    return a == b


def block_mismatches(block: dict[str, Any], inputs: dict[str, Any], verdict: dict[str, Any]) -> list[str]:
    """The fields of a validation block (the entry's, or its `stability` one) that differ from what
    its bundle says: verdict, window, repeat, platform, failed rules, entry and patch digests. The
    release publishes these fields, so a value the bundle does not back is a false claim. window_s,
    repeat and platform must be present; the others are compared when the block has them."""
    found_params, found_patch = inputs.get("params"), inputs.get("patch")
    params: dict[str, Any] = found_params if isinstance(found_params, dict) else {}
    patch: dict[str, Any] = found_patch if isinstance(found_patch, dict) else {}
    said = {
        "verdict": verdict.get("status"),
        "window_s": params.get("window_s"),
        "repeat": params.get("repeat"),
        "platform": inputs.get("platform"),
        "failed_rules": verdict.get("failed_rules", []),
        "entry_digest": inputs.get("entry_digest"),
        "patch_digest": patch.get("digest"),
    }
    required = ("verdict", "window_s", "repeat", "platform")
    out = []
    for name, value in said.items():
        claim = block.get(name, [] if name == "failed_rules" else None)
        if (name in required or claim is not None) and not _same(claim, value):
            out.append(f"{name}: the entry says {claim!r}, its bundle {value!r}")
    return out


def bound(workspace: Workspace, entry: Entry) -> list[str]:
    """The bindings the entry's admitting bundle seals ([] for bundles sealed before them)."""
    v = entry.validation
    if v is None or not v.bundle:
        return []
    sealed = read_object(safe_path(workspace.root, v.bundle, "validation.bundle"), "inputs.json").get("bindings")
    return [k for k in KINDS if isinstance(sealed, dict) and k in sealed]
