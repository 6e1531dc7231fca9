"""The README documents every command, and opens with the two commands a newcomer needs."""

from __future__ import annotations

from pathlib import Path

import click

from faultkit.cli import main_group

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def commands(group: click.Group, prefix: str = "faultkit") -> list[str]:
    ctx = click.Context(group)
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        full = f"{prefix} {name}"
        out += commands(cmd, full) if isinstance(cmd, click.Group) else [full]
    return out


def test_every_command_is_in_the_command_reference():
    reference = README.split("## Command reference", 1)[1]
    found = commands(main_group)
    assert len(found) >= 20  # every command is seen, lazily loaded ones included
    missing = [c for c in found if f"`{c}" not in reference]
    assert not missing, f"document these in README.md's command reference: {missing}"


def test_readme_opens_with_setup_and_test_commands():
    block = README.split("```", 2)[1].splitlines()[1:]
    assert block[0].startswith("bash scripts/quickstart.sh")
    assert block[1].startswith("bash scripts/test.sh")
