"""Options and rendering shared by every command."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from rich.console import Console

from faultkit.errors import UsageError
from faultkit.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])

json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON, for scripts and CI.")


def workspace() -> Workspace:
    return Workspace.find()


def console(stderr: bool = False) -> Console:
    """Markup is off: ids, paths and messages come from pull requests, and `[/red]` in one must be
    printed as text, not crash rich. Styled text is built with rich.text.Text or escape()."""
    from rich.console import Console  # imported when a command renders with it: lint does not (issue 20)

    return Console(stderr=stderr, highlight=False, soft_wrap=True, markup=False)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def seconds(text: str) -> float:
    """'300', '20s', '5m', '1.5m' -> seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min)?\s*", text)
    if not m:
        raise UsageError(f"{text!r} is not a duration; write it like 20s or 5m")
    return float(m.group(1)) * (60 if m.group(2) in ("m", "min") else 1)
