"""`faultkit catalog build` and `faultkit catalog export`: publish the admitted catalog."""

from __future__ import annotations

import re
from pathlib import Path

import click
from rich.markup import escape

from faultkit.catalog.chaos_mesh import chaos_mesh, object_list
from faultkit.catalog.export import incident_records
from faultkit.catalog.release import Custody, build_release, release_text, write_release
from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.errors import UsageError
from faultkit.keys import trusted_or_own
from faultkit.labels.core import app_of, label_bundle, labels_text
from faultkit.validators.judge import judge_bundle
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write

NAMESPACE_RE = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")  # fullmatch: `$` would admit a newline

trust_option = click.option(
    "--trust", "trust", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
    help="Public key (PEM) of a trusted validator; repeatable. Adds to [trust] keys in faultkit.toml.",
)


def custody(ws: Workspace, trust: tuple[Path, ...]) -> Custody:
    """The judge and the trusted keys. With neither --trust nor [trust], the one trusted key is this
    user's own validator key: a local catalog admits what its own validator observed."""
    # the command layer hands the validator's judge and the labeller to the catalog, which imports neither
    # (both import the catalog)
    def relabel(folder: Path) -> str:
        return labels_text(label_bundle(folder, app_of(ws, folder)))

    return Custody(judge=judge_bundle, trusted=trusted_or_own(ws.root, trust), relabel=relabel)


@click.command("build")
@click.option(
    "--version",
    "version",
    help="Release version (default: <date of the newest verdict>-<content hash>).",
)
@click.option("--out", "out", type=click.Path(path_type=Path), help="Folder to write into (default: dist/).")
@trust_option
@json_option
def build_cmd(version: str | None, out: Path | None, trust: tuple[Path, ...], as_json: bool) -> int:
    """Build dist/catalog-<version>.json from the entries whose admitting verdict is current.

    Every bundle is verified, its signer checked against the trusted keys, its sealed inputs
    compared with the entry and patch, and its verdict judged again. Entries left out are listed
    with the reason (invalid, no-verdict, rejected, flaky, stale-entry, stale-patch, no-evidence,
    untrusted, single-verdict: a bundle sealed under rules v3 needs a second verdict, validate
    --stability). An evidence bundle that no longer matches its manifest or verdict stops the build.

    Example: faultkit catalog build --version 2025.1 --trust keys/minishop-validator.pub
    """
    ws = workspace()
    release = build_release(ws, custody(ws, trust), version)
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
        return 0
    out_console = console()
    for item in release["excluded"]:
        line = f"{item['id']}: {item['reason']} ({item.get('detail', '')})"
        out_console.print("[yellow]excluded[/yellow] " + escape(line), markup=True)
    out_console.print(
        f"{shown}: {len(release['entries'])} entries, {len(release['excluded'])} excluded, {release['digest']}",
        markup=False,
    )
    return 0


@click.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["incident-records", "chaos-mesh"]),
    default="incident-records",
    show_default=True,
    help="What to export.",
)
@click.option("--out", "out", type=click.Path(path_type=Path), help="Write here (default: standard output).")
@click.option("--namespace", default="default", show_default=True, help="chaos-mesh: namespace of the target pods.")
@click.option("--duration", "duration", help="chaos-mesh: how long each fault lasts (default: its validation window).")
@trust_option
def export_cmd(fmt: str, out: Path | None, namespace: str, duration: str | None, trust: tuple[Path, ...]) -> int:
    """Export each admitted fault as an incident record (title, summary, impact, root cause,
    mitigation, timeline), built from its entry and evidence.

    Title, summary and impact describe symptoms only; they never name the artifact, the service,
    the changed field or value, the patch or the mechanism.

    With --format chaos-mesh: every admitted direct fault as the Chaos Mesh object that carries it
    out (a v1 List for kubectl apply); faults with no equivalent are listed on stderr with the reason.

    Example: faultkit catalog export --format incident-records --out dist/incidents.json
    """
    if fmt == "chaos-mesh":
        from faultkit.commands.validate_cmds import seconds  # the one duration parser

        if not NAMESPACE_RE.fullmatch(namespace):
            raise UsageError(f"--namespace {namespace!r}: use lower-case letters, digits and -, at most 63")
        ws = workspace()
        objects, skipped = chaos_mesh(ws, custody(ws, trust), namespace, seconds(duration) if duration else None)
        for s in skipped:
            console(stderr=True).print(f"not exported {s.id} ({s.action}): {s.reason}", markup=False)
        text = release_text(object_list(objects))
    else:
        ws = workspace()
        text = release_text(incident_records(ws, custody(ws, trust)))
    if out:
        atomic_write(out, text)
        console(stderr=True).print(f"{out}: written", markup=False)
    else:
        click.echo(text, nl=False)
    return 0


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)

