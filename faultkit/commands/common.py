"""Options and rendering shared by every command."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from rich.console import Console

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
