"""Changes a pull request may not make on its own (issue 32): what decides who is trusted, what a
rule measures, what a verdict was measured on, and the gate itself. The gate lists each as a change
that needs a maintainer; it fails the check unless the maintainer accepts it (`--accept-privileged`,
which the workflow passes when the pull request carries the maintainer's label).

- trust: faultkit.toml's [trust] table (which validator keys are believed), and keys/;
- rules: any other table of faultkit.toml ([leakage] words, [validator], ...);
- descriptor: apps/<app>/app.yaml (services, graph, build commands, upstream pin); one that does not
  load is an error as well, accepted or not;
- app: anything else under apps/ (the pinned source, the manifests);
- workflow: .github/workflows/;
- cache: anything in a cache folder (.faultkit_cache/ and the like), which no repository should hold;
- toolkit: faultkit/, pyproject.toml, scripts/ci/ (the rules, the judge and the gate themselves).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from faultkit.apps.descriptor import load_descriptor
from faultkit.errors import FaultkitError
from faultkit.gate.git_changes import Changes, git

CONFIG = "faultkit.toml"
CACHE_FOLDERS = frozenset({".faultkit_cache", ".cache"})
TOOLKIT = ("faultkit/", "scripts/ci/")
NEEDS = {
    "trust": "decides which validator keys are trusted",
    "keys": "holds the validator keys the trust list may name",
    "rules": "changes what the rules check",
    "descriptor": "changes what every verdict of the app was measured on",
    "app": "changes the app's pinned source or manifests that verdicts were measured on",
    "workflow": "changes the CI workflow that runs the gate and holds the keys",
    "cache": "commits a cache, which faultkit never reads from a repository",
    "toolkit": "changes faultkit itself: the rules, the judge, the gate",
}


@dataclass(frozen=True)
class Privileged:
    """One changed path that needs a maintainer."""

    path: str  # repository-relative
    kind: str  # a key of NEEDS
    detail: str
    error: str = ""  # the file itself is invalid (a descriptor that does not load): fails even when accepted

    def render(self) -> str:
        text = f"{self.path}: {self.kind}: {self.detail}"
        return f"{text}; invalid: {self.error}" if self.error else text


def privileged(top: Path, ch: Changes) -> tuple[Privileged, ...]:
    """Every privileged change between the merge base and HEAD, in path order."""
    found: list[Privileged] = []
    for status, path in ch.paths:
        rel = path[len(ch.prefix):] if path.startswith(ch.prefix) else None
        kind = _kind(path, rel)
        if kind is None:
            continue
        if kind == "settings":
            found += _settings(top, ch, path)
            continue
        error = _descriptor_error(top / path) if kind == "descriptor" and status != "D" else ""
        verb = {"A": "added", "D": "deleted"}.get(status, "modified")
        found.append(Privileged(path, kind, f"{verb}; {NEEDS[kind]}", error))
    return tuple(found)


def _kind(path: str, rel: str | None) -> str | None:
    parts = PurePosixPath(path).parts
    if CACHE_FOLDERS & set(parts[:-1]):
        return "cache"
    if path.startswith(".github/workflows/"):
        return "workflow"
    if path == "pyproject.toml" or path.startswith(TOOLKIT):
        return "toolkit"
    if rel is None:
        return None
    if rel == CONFIG:
        return "settings"
    if rel.startswith("keys/"):
        return "keys"
    if rel.startswith("apps/"):
        return "descriptor" if len(PurePosixPath(rel).parts) == 3 and rel.endswith("/app.yaml") else "app"
    return None


def _settings(top: Path, ch: Changes, path: str) -> list[Privileged]:
    """One finding per changed table of faultkit.toml: [trust] is trust, any other a rule setting."""
    before, after = _toml(top, ch.base, path), _toml(top, ch.head, path)
    if isinstance(after, str):
        return [Privileged(path, "rules", "modified; " + NEEDS["rules"], after)]
    old: dict = before if isinstance(before, dict) else {}
    new: dict = after if isinstance(after, dict) else {}  # None: deleted
    tables = sorted(k for k in {*old, *new} if old.get(k) != new.get(k))
    return [Privileged(path, "trust" if t == "trust" else "rules", f"[{t}] changed; "
                       + NEEDS["trust" if t == "trust" else "rules"]) for t in tables]


def _toml(top: Path, commit: str, path: str) -> dict | str | None:
    """The file as committed (None when absent there), or why it does not parse."""
    found = git(top, "cat-file", "blob", f"{commit}:{path}")
    if not found.ok:
        return None
    try:
        return tomllib.loads(found.output)
    except tomllib.TOMLDecodeError as e:
        return f"not valid TOML ({e})"


def _descriptor_error(path: Path) -> str:
    try:
        load_descriptor(path)
    except FaultkitError as e:
        return str(e)
    return ""
