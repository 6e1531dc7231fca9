"""What a pull request changed, read from git: the entry files and the patches, since a base REF.

The gate reads committed history only (merge-base(REF, HEAD)..HEAD, what a pull request adds), so
it refuses a working tree whose catalog data differs from HEAD: what it would check would not be
what is committed. git runs through faultkit.process (no gitpython: its import alone costs more
than these calls): one rev-parse, one status, one merge-base and one `git diff --name-status`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from faultkit.errors import FaultkitError, InputError, UsageError
from faultkit.process import ProcessResult, run
from faultkit.workspace import Workspace

DATA_DIRS = ("catalog", "patches", "apps")
ENTRY_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Changes:
    base: str  # the commit compared against (the merge base of REF and HEAD)
    head: str
    entries: tuple[str, ...]  # workspace-relative entry files added or modified
    removed: tuple[str, ...]  # workspace-relative entry files deleted
    patches: tuple[str, ...]  # workspace-relative patch files added, modified or deleted
    prefix: str  # the workspace's folder inside the repository ("" at the top)
    target: str = ""  # REF's own commit: the base branch as it is, where the trust anchors are read
    paths: tuple[tuple[str, str], ...] = ()  # (status, repository-relative path) of every changed file
    evidence: tuple[str, ...] = ()  # workspace-relative evidence files added, modified or deleted


def git(cwd: Path, *args: str) -> ProcessResult:
    return run(["git", "-c", "core.quotepath=off", *args], cwd=cwd, timeout=120, env={"GIT_OPTIONAL_LOCKS": "0"})


def _ok(result: ProcessResult) -> str:
    if not result.ok:
        raise FaultkitError(f"{' '.join(result.command)} failed with exit code {result.code}: {result.tail(5)}")
    return result.output


def resolve(workspace: Workspace, ref: str) -> tuple[Path, str, str]:
    """(repository top, HEAD, REF) in one rev-parse; on failure, find out which of them is missing."""
    # a REF that starts with "-" would be read as an option (this rev-parse has no --end-of-options)
    found = git(workspace.root, "rev-parse", "--show-toplevel", "HEAD", f"{ref}^{{commit}}")
    lines = found.output.split("\n")
    if not ref.startswith("-") and found.ok and len(lines) >= 3 and all(len(x) in (40, 64) for x in lines[1:3]):
        return Path(lines[0]).resolve(), lines[1], lines[2]
    if not git(workspace.root, "rev-parse", "--show-toplevel").ok:
        raise InputError(f"{workspace.root}: not a git repository; the gate compares commits")
    if not git(workspace.root, "rev-parse", "--verify", "--quiet", "HEAD").ok:
        raise InputError(f"{workspace.root}: the repository has no commit yet")
    raise UsageError(
        f"--base {ref!r} is not a commit of this repository; fetch it first "
        "(git fetch origin <branch>, checkout with fetch-depth: 0)"
    )


def require_clean(top: Path, prefix: str) -> None:
    """Refuse uncommitted changes to tracked files, and untracked catalog data."""
    out = _ok(git(top, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all"))
    found = []
    for record in filter(None, out.split("\0")):
        state, path = record[:2], record[3:]
        if state != "??" or any(path.startswith(f"{prefix}{d}/") for d in DATA_DIRS):
            found.append(path)
    found = sorted(set(found))
    if found:
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        raise InputError(
            f"working tree is dirty ({', '.join(found[:3])}{more}); the gate checks "
            "commits: commit or stash the changes first"
        )


def changes(workspace: Workspace, ref: str) -> Changes:
    top, head, ref_commit = resolve(workspace, ref)
    prefix = workspace.root.relative_to(top).as_posix() + "/" if workspace.root != top else ""
    require_clean(top, prefix)
    bases = git(top, "merge-base", ref_commit, head)
    base = bases.output.split()[0] if bases.ok and bases.output.strip() else ref_commit
    out = _ok(git(top, "diff", "--name-status", "-z", "--no-renames", base, head, "--"))
    fields = [f for f in out.split("\0") if f]
    entries: set[str] = set()
    removed: set[str] = set()
    patches: set[str] = set()
    evidence: set[str] = set()
    pairs = list(zip(fields[::2], fields[1::2], strict=False))
    for status, path in pairs:
        rel = _within(path, prefix)
        if rel is None:
            continue
        if rel.startswith("catalog/") and rel.endswith(ENTRY_SUFFIXES):
            (removed if status == "D" else entries).add(rel)
        elif rel.startswith("patches/"):
            patches.add(rel)
        elif rel.startswith("evidence/"):
            evidence.add(rel)
    return Changes(base, head, tuple(sorted(entries)), tuple(sorted(removed - entries)), tuple(sorted(patches)),
                   prefix, ref_commit, tuple(sorted(pairs, key=lambda p: p[1])), tuple(sorted(evidence)))


def _within(path: str | None, prefix: str) -> str | None:
    if not path or not path.startswith(prefix):
        return None
    return PurePosixPath(path[len(prefix) :]).as_posix()
