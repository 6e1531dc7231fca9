"""Names that become paths, and paths that must stay where they belong.

Fault ids, app names, workload names and release versions end up as file and folder names. One
pattern decides which are acceptable, matched whole (`fullmatch`: Python's `$` also matches before
a trailing newline), so no name can hold a separator, a newline, `..` or a leading dot.
"""

from __future__ import annotations

import errno
import re
from pathlib import Path, PurePosixPath

from faultkit.errors import InputError, UsageError

NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._+-]{0,126}[A-Za-z0-9])?")


def check_name(value: object, what: str = "name") -> str:
    """`value` when it is safe as one path component; InputError otherwise."""
    if not isinstance(value, str) or not NAME.fullmatch(value) or ".." in value:
        raise InputError(f"{what} {value!r}: use letters, digits and . _ + - (at most 128, no '..', no separator, "
                         "starting and ending with a letter or digit)")
    return value


def check_option(value: str, option: str) -> str:
    """check_name for a command-line value: a refusal is a usage error (exit 2)."""
    try:
        return check_name(value, option)
    except InputError as e:
        raise UsageError(str(e)) from None


def resolve(path: Path, what: str = "path") -> Path:
    """`path` with its symlinks resolved; a symlink loop (RuntimeError in Python 3.11, OSError
    later) is an InputError naming the path instead of a crash."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as e:
        reason = "a symlink loop" if isinstance(e, RuntimeError) or getattr(e, "errno", 0) == errno.ELOOP else str(e)
        raise InputError(f"{what} {path}: cannot be followed ({reason}); make it a regular file or folder") from None


def make_folder(path: Path, what: str = "folder") -> Path:
    """mkdir -p `path`, or an InputError naming it: a file there, or a symlink that leads to itself
    (FileExistsError from mkdir), is a refusal, not a crash."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(f"{what} {path}: is not a folder (a file, or a symlink that leads to itself); "
                         "name a folder") from None
    except OSError as e:
        raise InputError(f"{what} {path}: cannot make it ({e.strerror})") from None
    return path


def confine(root: Path, path: Path, what: str = "path") -> Path:
    """`path`, refused unless it stays inside `root` once symlinks are resolved."""
    if not resolve(path, what).is_relative_to(root.resolve()):
        raise InputError(f"{what} {path}: leads outside {root}; name a file inside it")
    return path


def safe_path(root: Path, ref: str, what: str = "path") -> Path:
    """`root/ref`, refusing absolute paths, `..`, and symlinks that lead out of `root`."""
    if not isinstance(ref, str) or "\n" in ref or "\0" in ref:
        raise InputError(f"{what} {ref!r} is not a path; give a path relative to the repository")
    pure = PurePosixPath(ref)
    if pure.is_absolute() or ref.startswith("~"):
        raise InputError(f"{what} {ref!r} is absolute; give a path relative to the repository")
    if ".." in pure.parts:
        raise InputError(f"{what} {ref!r} contains '..'; give a path inside the repository")
    path = root / pure
    if not resolve(path, what).is_relative_to(root.resolve()):
        raise InputError(f"{what} {ref!r} leads out of the repository through a symlink")
    return path
