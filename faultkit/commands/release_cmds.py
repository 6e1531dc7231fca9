"""`faultkit catalog build` and `faultkit catalog export`: publish the admitted catalog."""

from __future__ import annotations

from pathlib import Path

import click

from faultkit.catalog.export import incident_records
from faultkit.catalog.release import build_release, release_text, write_release
from faultkit.commands import catalog_cmds
from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.yamlio import atomic_write


@click.command("build")
@click.option(
    "--version",
    "version",
    help="Release version (default: <date of the newest verdict>-<content hash>).",
)
@click.option("--out", "out", type=click.Path(path_type=Path), help="Folder to write into (default: dist/).")
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
        out_console.print(f"[yellow]excluded[/yellow] {item['id']}: {item['reason']} ({item.get('detail', '')})")
    out_console.print(
        f"{shown}: {len(release['entries'])} entries, {len(release['excluded'])} excluded, {release['digest']}"
    )


@click.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["incident-records"]),
    default="incident-records",
    show_default=True,
    help="What to export.",
)
@click.option("--out", "out", type=click.Path(path_type=Path), help="Write here (default: standard output).")
def export_cmd(fmt: str, out: Path | None) -> None:
    """Export each admitted fault as an incident record (title, summary, impact, root cause,
    mitigation, timeline), built from its entry and evidence.

    Title, summary and impact describe symptoms only; they never name the artifact, the service,
    the changed field or value, the patch or the mechanism.

    Example: faultkit catalog export --format incident-records --out dist/incidents.json
    """
    text = release_text(incident_records(workspace()))
    if out:
        atomic_write(out, text)
        console(stderr=True).print(f"{out}: written", markup=False)
    else:
        click.echo(text, nl=False)


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


catalog_cmds.catalog.add_command(build_cmd)
catalog_cmds.catalog.add_command(export_cmd)
