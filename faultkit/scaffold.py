"""`faultkit init`: a new catalog repository, laid out as faultkit expects and ready for `apps import`.

The gate workflow and the pre-commit hook are this repository's own (packaged copies under
faultkit/templates/, kept identical by a test), adjusted for a catalog that installs faultkit rather
than being faultkit: the workflow installs the released toolkit, and the hook runs the installed
command as a local hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import git
import yaml

from faultkit import __version__
from faultkit.errors import InputError
from faultkit.names import make_folder, resolve
from faultkit.yamlio import atomic_write

FOLDERS = ("apps", "catalog", "patches", "schedules", "evidence", "dist")
GITIGNORE = """\
# faultkit's own state (platform, journals, worktrees) and caches
.faultkit/
__pycache__/
.ruff_cache/
.pytest_cache/
/dist/*.html
"""
TOML = """\
# faultkit settings for this catalog repository.

[leakage]
# Words that give a fault away to an agent, beyond faultkit's default list; and default words
# this catalog allows.
extra = []
allow = []
"""
README = """\
# Fault catalog

A faultkit catalog repository. Start with an application's Kubernetes manifests:

    faultkit apps import --name APP path/to/manifests.yaml
    faultkit author candidates --app APP
    faultkit catalog lint

apps/ holds application descriptors, catalog/ the fault entries, patches/ code-fault diffs,
evidence/ sealed validation bundles, dist/ releases and schedules/ drawn schedules.
"""


@dataclass(frozen=True)
class Created:
    root: Path
    written: tuple[str, ...]  # paths relative to root
    kept: tuple[str, ...]  # files that were there already and were left as they are
    git_initialised: bool


def _template(name: str) -> str:
    return resources.files("faultkit").joinpath("templates", name).read_text("utf-8")


def gate_workflow() -> str:
    """The repository's gate workflow for a catalog that installs faultkit instead of being it."""
    text = _template("faultkit-gate.yml")
    pinned = f'      - run: pip install "faultkit=={__version__}"\n'
    text = text.replace("      - run: pip install .\n", pinned)
    text = text.replace('      - run: pip install "$RUNNER_TEMP/base"\n', pinned)  # the gate job: the base's toolkit
    return text.replace('      - "faultkit/**"\n', "")


def pre_commit_config() -> str:
    """A .pre-commit-config.yaml running this repository's hooks against the installed faultkit."""
    hooks = yaml.safe_load(_template("pre-commit-hooks.yaml"))
    local = [{**h, "language": "system"} for h in hooks]
    header = ("# faultkit's pre-commit hooks (faultkit's .pre-commit-hooks.yaml), run with the installed\n"
              "# faultkit command: pip install faultkit && pre-commit install\n")
    return header + yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}, sort_keys=False)


def files() -> dict[str, str]:
    return {
        "faultkit.toml": TOML,
        ".gitignore": GITIGNORE,
        "README.md": README,
        ".github/workflows/faultkit-gate.yml": gate_workflow(),
        "scripts/ci/gate-kubernetes.sh": _template("gate-kubernetes.sh"),  # the workflow's validate job
        ".pre-commit-config.yaml": pre_commit_config(),
    }


def init(root: Path) -> Created:
    """Lay out a catalog repository at `root` (created if missing); never overwrite a file."""
    root = resolve(root, "folder")  # a symlink loop is a one-line refusal
    if root.exists() and not root.is_dir():
        raise InputError(f"{root}: exists and is not a folder; give a new or an existing folder")
    for marker in ("apps", "faultkit.toml"):
        if (root / marker).exists():
            raise InputError(f"{root}: already a faultkit catalog repository ({marker} exists); nothing to do")
    make_folder(root)
    written: list[str] = []
    kept: list[str] = []
    for folder in FOLDERS:
        (root / folder).mkdir(exist_ok=True)
        keep = root / folder / ".gitkeep"
        if not any((root / folder).iterdir()):
            atomic_write(keep, "")
            written.append(f"{folder}/.gitkeep")
    for rel, text in files().items():
        path = root / rel
        if path.exists():
            kept.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
        written.append(rel)
    initialised = False
    try:
        git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        git.Repo.init(root)
        initialised = True
    return Created(root, tuple(written), tuple(kept), initialised)
