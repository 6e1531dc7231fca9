"""Code faults: a git working copy of a service's pinned source, and the patch captured from it.

`start` lays out the service folder and the app's common folders as they sit in the app folder
(src/<svc>/..., src/<common>/...) and commits them as the base. The author edits there. `finish`
diffs against the base, refuses changes outside the service's own folder, writes
patches/<app>/<id>.diff (paths relative to the app folder, applied by the validator with `git apply`)
and scaffolds catalog/<app>/<id>.yaml.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.authoring.common import (
    EFFECT_TODO,
    check_id,
    entry_path,
    entry_probe,
    render,
    service_aliases,
    skeleton,
    todo,
    write_new,
)
from faultkit.catalog.placeholders import todo_paths
from faultkit.catalog.rules.leakage import Leak, giveaway_words, patch_leaks
from faultkit.errors import InputError, UsageError
from faultkit.names import confine
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write

SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".ruff_cache", ".pytest_cache", ".mypy_cache",
                              ".benchmarks", ".git")
SESSION = "faultkit-session.json"
# caches that running the service's lint and tests in the working copy leaves behind
EXCLUDE = "__pycache__/\n*.pyc\n.ruff_cache/\n.pytest_cache/\n.benchmarks/\n"
_LITERAL = re.compile(r'"((?:\\.|[^"\\]){4,})"|\'((?:\\.|[^\'\\]){4,})\'')
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{5,}\b")


@dataclass(frozen=True)
class Session:
    id: str
    app: str
    service: str
    source: str  # the service folder relative to the app folder, e.g. src/cart
    base: str  # the base commit
    path: Path  # the working copy

    @property
    def edit_dir(self) -> Path:
        return self.path / self.source


@dataclass(frozen=True)
class Finished:
    patch: Path
    entry: Path | None  # None when an existing entry was kept
    files: tuple[str, ...]
    marker: str
    leaks: tuple[Leak, ...]
    todos: tuple[str, ...]


def sessions_dir(ws: Workspace) -> Path:
    return ws.state_dir / "authoring"


def layout(app: AppDescriptor, service: str, source_root: Path | None = None) -> list[tuple[Path, str]]:
    """The service's and common folders the working copy holds (the service's first): each folder to
    copy, and its path in the working copy, which is the path a patch names.

    Patch paths are relative to the app folder, where the validator applies them (src/cart/main.py),
    wherever the source is read from: the app folder, a link out of it (an upstream checkout linked
    in), or a checkout the author names with `--source DIR`. A source folder that is not under the
    app folder (`source: ../../src`) has no such path: there they are relative to the source root.
    """
    spec = app.service(service)
    if spec.source is None or (app.source_dir is None and source_root is None):
        raise InputError(f"{service} has no source folder in {app.name}'s descriptor (services[].source); "
                         "a code fault needs the service's source")
    source = source_root if source_root is not None else app.source_dir
    assert source is not None  # refused above
    root = source.resolve()
    place = _in_app_folder(app)
    folders = []
    for rel in (spec.source, *app.common):
        folder = (root / rel).resolve()
        if not folder.is_relative_to(root):
            raise InputError(f"{app.name}: source folder {rel!r} leads outside {root}; name a folder inside it")
        if not folder.is_dir():
            hint = "" if source_root is not None else "; or pass --source DIR, a checkout of the source"
            raise InputError(f"{folder}: source folder named by {app.name}'s descriptor not found{hint}")
        folders.append((folder, (Path(place) / folder.relative_to(root)).as_posix()))
    return folders


def _in_app_folder(app: AppDescriptor) -> str:
    """The source folder's path in the app folder, as the descriptor names it (a link is not followed);
    '' when it is not under the app folder."""
    if app.source_dir is None:
        return ""
    src, root = Path(os.path.normpath(app.source_dir)), Path(os.path.normpath(app.root))
    return src.relative_to(root).as_posix() if src.is_relative_to(root) and src != root else ""


def start(ws: Workspace, app_name: str, service: str, entry_id: str, source_root: Path | None = None) -> Session:
    check_id(entry_id)
    app = load_app(ws, app_name)
    folders = layout(app, service, source_root)
    for taken in (entry_path(ws, app.name, entry_id), ws.patches_dir / app.name / f"{entry_id}.diff"):
        if taken.exists():
            raise InputError(f"{taken.relative_to(ws.root)} already exists; choose another id")
    wc = sessions_dir(ws) / entry_id
    if wc.exists():
        raise UsageError(f"{wc}: a working copy for {entry_id!r} exists; edit it and run "
                         f"`faultkit author code --finish {entry_id}`, or `--discard {entry_id}` to start over")
    try:
        for folder, rel in folders:
            shutil.copytree(folder, wc / rel, ignore=SKIP, symlinks=True)
        repo = git.Repo.init(wc)
        with repo.config_writer() as cfg:
            cfg.set_value("user", "name", "faultkit author")
            cfg.set_value("user", "email", "author@faultkit.invalid")
            cfg.set_value("core", "autocrlf", "false")
            cfg.set_value("core", "excludesFile", "")  # the author's global ignores must not hide source
        (wc / ".git" / "info").mkdir(exist_ok=True)
        (wc / ".git" / "info" / "exclude").write_text(EXCLUDE)
        repo.git.add(A=True)
        if not repo.git.diff("--cached", "--name-only"):
            raise InputError(f"{folders[0][0]}: no source files to author on (the folder is empty); "
                             "put the service's source there, or pass --source DIR, a checkout of it")
        repo.git.commit("-q", "-m", f"{app.name} {app.version}: {service} base", "--no-verify")
        session = Session(entry_id, app.name, service, folders[0][1], repo.head.commit.hexsha, wc)
        (wc / ".git" / SESSION).write_text(json.dumps({k: str(v) for k, v in session.__dict__.items()}))
    except git.GitCommandError as e:
        shutil.rmtree(wc, ignore_errors=True)
        detail = (e.stderr or e.stdout or str(e)).strip().splitlines()
        raise InputError(f"{wc}: git could not record the base ({detail[-1] if detail else e}); "
                         "check that git works here (git --version, git config)") from None
    except BaseException:
        shutil.rmtree(wc, ignore_errors=True)
        raise
    return session


def check_commands(app: AppDescriptor, service: str) -> list[list[str]]:
    """The service's build lint and test commands, run in its folder by the validator."""
    return [list(c) for c in app.checks(service) if c]


def load_session(ws: Workspace, entry_id: str) -> Session:
    wc = sessions_dir(ws) / check_id(entry_id)
    meta = wc / ".git" / SESSION
    if not meta.is_file():
        raise UsageError(f"no working copy for {entry_id!r} under {sessions_dir(ws)}; start one with "
                         f"`faultkit author code --app APP --service SVC --id {entry_id}`")
    d = json.loads(meta.read_text())
    return Session(d["id"], d["app"], d["service"], d["source"], d["base"], wc)


def discard(ws: Workspace, entry_id: str) -> Path:
    session = load_session(ws, entry_id)
    shutil.rmtree(session.path)
    return session.path


def capture(session: Session) -> tuple[str, tuple[str, ...]]:
    """The diff of the working copy against the base, and the paths it touches; refuses any path
    outside the service's folder, symlinks and binary files."""
    repo = git.Repo(session.path)
    repo.git.add(A=True)
    raw = repo.git.diff("--cached", session.base, "--raw", "--no-renames", "-z").split("\0")
    changes = [(meta.split()[1], path) for meta, path in zip(raw[0::2], raw[1::2], strict=False) if meta]
    paths = tuple(path for _, path in changes)
    if not paths:
        raise InputError(f"nothing changed in {session.edit_dir} since the base; edit the source, then finish")
    outside = [p for p in paths if not p.startswith(session.source + "/")]
    if outside:
        raise InputError(f"only files under {session.source}/ may change; revert these and finish again: "
                         f"{', '.join(sorted(outside))}")
    links = [p for mode, p in changes if mode == "120000"]
    if links:
        raise InputError(f"symbolic links are not allowed in a source patch: {', '.join(links)}")
    numstat = repo.git.diff("--cached", session.base, "--numstat", "--no-renames")
    binary = [line.split("\t", 2)[2] for line in numstat.splitlines() if line.startswith("-\t-\t")]
    if binary:
        raise InputError(f"binary files cannot go through a text patch: {', '.join(binary)}")
    text = repo.git.diff("--cached", session.base, "--no-renames", "--no-color", "--no-ext-diff",
                         "--src-prefix=a/", "--dst-prefix=b/")
    return text + "\n", paths


def added_lines(diff: str) -> list[str]:
    return [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]


def choose_marker(added: list[str], original: str) -> str | None:
    """Text the patch introduces that the original source does not contain: a string literal if
    one qualifies, else an identifier, longest first."""
    literals = [a or b for line in added for a, b in _LITERAL.findall(line)]
    idents = [m for line in added for m in _IDENT.findall(line)]
    for group in (literals, idents):
        fresh = sorted({c for c in group if c.strip() and len(c) <= 80 and c not in original},
                       key=lambda c: (-len(c), c))
        if fresh:
            return fresh[0]
    lines = sorted({s.strip() for s in added if len(s.strip()) >= 8 and s.strip() not in original}, key=len)
    return lines[-1][:80] if lines else None


def is_test_file(path: str) -> bool:
    """A test by the usual layouts: a tests/ or test/ folder, test_*.py, *_test.go, *.test.js, *Test.java."""
    p = Path(path)
    return (bool({"test", "tests", "__tests__"} & set(p.parts[:-1])) or p.name.startswith("test_")
            or p.stem.endswith(("_test", ".test", ".spec", "Test", "Tests")))


def original_text(session: Session) -> str:
    repo = git.Repo(session.path)
    names = repo.git.ls_tree("-r", "--name-only", session.base).splitlines()
    return "\n".join(repo.git.show(f"{session.base}:{n}") for n in names if not n.endswith((".json", ".png")))


def scaffold(app: AppDescriptor, session: Session, files: tuple[str, ...], diff: str,
             marker: str | None) -> dict[str, Any]:
    service = session.service
    counts = {f: sum(1 for _ in _added_in(diff, f)) for f in files}
    # the artifact is the changed source, not the tests updated beside it (often the larger change)
    main_file = max(files, key=lambda f: (not is_test_file(f), counts[f], f))
    in_service = main_file.removeprefix(Path(session.source).parent.as_posix() + "/")
    aliases = list(dict.fromkeys([*service_aliases(app, service), Path(main_file).name, in_service]))
    marker = marker or todo("text the patch adds that no earlier build contains")
    data = skeleton(app, session.id, todo("short neutral title"), "code", "code-bug", "service", service)
    data.update({
        "artifact": {"kind": "source-file", "ref": main_file, "aliases": aliases},
        "probe": entry_probe(app),
        "artifact_check": {"kind": "build", "service": service, "absent_marker": marker},
        "effect": EFFECT_TODO,
        "evidence": {"metrics": [todo("metrics a grounded diagnosis cites")],
                     "logs": [todo("log keywords a grounded diagnosis cites")], "traces": [service]},
        "recovery": f"Roll {service} back to the build before the change ({main_file}) and wait for readiness.",
        "code": {"patch": f"patches/{app.name}/{session.id}.diff",
                 "update": todo("the intended, plausible change"),
                 "defect": todo("the wrong assumption it carries"),
                 "requests": [todo("an ordinary request that reaches the changed code, e.g. GET /cart")],
                 "marker": marker},
        "log": {"message": todo("the log message the defect produces"), "service": service},
    })
    return data


def _added_in(diff: str, file: str) -> list[str]:
    out, current = [], None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
        elif current == file and line.startswith("+"):
            out.append(line[1:])
    return out


def finish(ws: Workspace, entry_id: str) -> Finished:
    session = load_session(ws, entry_id)
    app = load_app(ws, session.app)
    diff, files = capture(session)
    added = added_lines(diff)
    marker = choose_marker(added, original_text(session))
    leaks = tuple(patch_leaks(files, added, giveaway_words(ws.root)))
    target = entry_path(ws, app.name, entry_id)  # checks both names and confines the path
    patch = confine(ws.root, ws.patches_dir / app.name / f"{entry_id}.diff", "patch file")
    data = scaffold(app, session, files, diff, marker)
    text = render(data)
    if target.exists():
        # a second finish after more editing: refresh the patch, keep the author's entry
        atomic_write(patch, diff)
        return Finished(patch, None, files, data["code"]["marker"], leaks, ())
    atomic_write(patch, diff)
    try:
        write_new(target, text)
    except BaseException:
        patch.unlink(missing_ok=True)
        raise
    return Finished(patch, target, files, data["code"]["marker"], leaks, tuple(p for p, _ in todo_paths(data)))
