"""`faultkit init [DIR]`: start a catalog repository."""

from __future__ import annotations

from pathlib import Path

import click

from faultkit.commands.common import json_option, print_json
from faultkit.scaffold import init


@click.command("init")
@click.argument("directory", type=click.Path(path_type=Path), default=".")
@json_option
def init_cmd(directory: Path, as_json: bool) -> int:
    """Lay out a new catalog repository in DIRECTORY (default: here), ready for `faultkit apps import`.

    Example: faultkit init my-catalog && cd my-catalog && faultkit apps import --name shop manifests.yaml
    """
    made = init(directory)
    if as_json:
        print_json({"root": str(made.root), "written": list(made.written), "kept": list(made.kept),
                    "git_initialised": made.git_initialised})
        return 0
    for rel in made.written:
        click.echo(f"wrote {rel}")
    for rel in made.kept:
        click.echo(f"kept {rel} (it was there already)")
    if made.git_initialised:
        click.echo("initialised a git repository (code faults are authored in git working copies)")
    click.echo(f"next: cd {directory} && faultkit apps import --name APP path/to/manifests.yaml")
    return 0
