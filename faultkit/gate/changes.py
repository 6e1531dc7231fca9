"""What a pull request changed, read from git: the entry files and the patches, since a base REF.

The gate reads committed history only (merge-base(REF, HEAD)..HEAD, what a pull request adds), so
it refuses a working tree whose catalog data differs from HEAD: what it would check would not be
what is committed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import git
from git.exc import BadName, GitCommandError, InvalidGitRepositoryError, NoSuchPathError

from faultkit.errors import InputError, UsageError
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


def open_repo(workspace: Workspace) -> git.Repo:
    try:
        return git.Repo(workspace.root, search_parent_directories=True)
    except (InvalidGitRepositoryError, NoSuchPathError):
        raise InputError(f"{workspace.root}: not a git repository; the gate compares commits") from None


def require_clean(repo: git.Repo, prefix: str) -> None:
    """Refuse uncommitted changes to tracked files, and untracked catalog data."""
    dirty = [d.a_path for d in repo.index.diff(None)] + [d.a_path for d in repo.index.diff("HEAD")]
    untracked = [p for p in repo.untracked_files if any(p.startswith(f"{prefix}{d}/") for d in DATA_DIRS)]
    found = sorted(set(dirty + untracked))
    if found:
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        raise InputError(
            f"working tree is dirty ({', '.join(found[:3])}{more}); the gate checks "
            "commits: commit or stash the changes first"
        )


def resolve(repo: git.Repo, ref: str) -> git.Commit:
    try:
        return repo.commit(ref)
    except (BadName, ValueError, GitCommandError):
        raise UsageError(
            f"--base {ref!r} is not a commit of this repository; fetch it first "
            "(git fetch origin <branch>, checkout with fetch-depth: 0)"
        ) from None


def changes(workspace: Workspace, ref: str) -> Changes:
    repo = open_repo(workspace)
    top = Path(repo.working_tree_dir or workspace.root).resolve()
    prefix = workspace.root.relative_to(top).as_posix() + "/" if workspace.root != top else ""
    if not repo.head.is_valid():
        raise InputError(f"{top}: the repository has no commit yet")
    base_commit = resolve(repo, ref)
    require_clean(repo, prefix)
    head = repo.head.commit
    bases = repo.merge_base(base_commit, head)
    base = bases[0] if bases else base_commit
    entries, removed, patches = set(), set(), set()
    for d in base.diff(head):
        for path, gone in ((d.a_path, d.change_type in ("D", "R")), (d.b_path, d.change_type == "D")):
            rel = _within(path, prefix)
            if rel is None:
                continue
            if rel.startswith("catalog/") and rel.endswith(ENTRY_SUFFIXES):
                (removed if gone else entries).add(rel)
            elif rel.startswith("patches/"):
                patches.add(rel)
    return Changes(
        base.hexsha,
        head.hexsha,
        tuple(sorted(entries)),
        tuple(sorted(removed - entries)),
        tuple(sorted(patches)),
        prefix,
    )


def _within(path: str | None, prefix: str) -> str | None:
    if not path or not path.startswith(prefix):
        return None
    return PurePosixPath(path[len(prefix) :]).as_posix()
