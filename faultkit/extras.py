"""Optional libraries: a base install has neither `kubernetes` nor `docker` (pyproject's extras).

Whatever needs one asks here before importing it, so a base install answers `--help` and every
command that does not need the library, and one that does says in one line which extra to install.
"""

from __future__ import annotations

import importlib.util

from faultkit.errors import FaultkitError


class MissingExtra(FaultkitError):
    """An optional library a command needs is not installed (exit 1); the message names the extra."""

    kind = "MissingExtra"


def require(extra: str, needed_for: str) -> None:
    """Raise MissingExtra unless the library of pyproject's extra `extra` (named as it) imports."""
    if importlib.util.find_spec(extra) is None:
        raise MissingExtra(f"{needed_for} needs the {extra!r} library, which is not installed: "
                           f"pip install 'faultkit[{extra}]'")
