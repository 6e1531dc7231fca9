"""`faultkit catalog build` and `faultkit catalog export`: publish the admitted catalog."""

from __future__ import annotations

from pathlib import Path

import click

from faultkit.catalog.release import build_release, write_release
from faultkit.commands import catalog_cmds
from faultkit.commands.common import console, json_option, print_json, workspace


@click.command("build")
@click.option(
    "--version",
    "version",
    help="Release version (default: <date of the newest verdict>-<content hash>).",
)
@click.option(
    "--out", "out", type=click.Path(path_type=Path), help="Folder to write into (default: dist/)."
)
@json_option
def build_cmd(version: str | None, out: Path | None, as_json: bool) -> None:
    """Build dist/catalog-<version>.json from the entries whose admitting verdict is current.

    Entries left out are listed with the reason (invalid, no-verdict, rejected, flaky, stale-entry,
    stale-patch). An evidence bundle that no longer matches its verdict stops the build.

    Example: faultkit catalog build --version 2025.1
    """
    ws = workspace()
    release = build_release(ws, version)
    path = write_release(release, out or ws.dist_dir)
    shown = _shown(path, ws.root)
    if as_json:
        print_json(
            {
                "path": shown,
                "version": release["version"],
                "digest": release["digest"],
                "entries": len(release["entries"]),
                "excluded": release["excluded"],
            }
        )
        return
    out_console = console()
    for item in release["excluded"]:
        out_console.print(
            f"[yellow]excluded[/yellow] {item['id']}: {item['reason']} ({item.get('detail', '')})"
        )
    out_console.print(
        f"{shown}: {len(release['entries'])} entries, {len(release['excluded'])} excluded, "
        f"{release['digest']}"
    )


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


catalog_cmds.catalog.add_command(build_cmd)
