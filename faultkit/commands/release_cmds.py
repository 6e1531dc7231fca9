"""`faultkit catalog build` and `faultkit catalog export`: publish the admitted catalog."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from faultkit.catalog.chaos_mesh import chaos_mesh, object_list
from faultkit.catalog.export import incident_records
from faultkit.catalog.release import Custody, build_release, release_text, write_release
from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.errors import UsageError
from faultkit.keys import TRUST_ENV, anchors
from faultkit.labels.core import app_of, label_bundle, labels_text
from faultkit.validators.judge import judge_bundle
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write

NAMESPACE_RE = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")  # fullmatch: `$` would admit a newline


def trust_option(f: Any) -> Any:
    """--trust KEY.pub, --trust-base REF and --trust-config FILE: where the trust anchors come from
    (issue 32: never from the change under review)."""
    f = click.option("--trust-config", "trust_config", type=click.Path(path_type=Path, dir_okay=False),
                     help=f"A TOML file outside the repository whose [trust] keys are the trusted validators "
                          f"(default: ${TRUST_ENV}); faultkit.toml's list is then not read.")(f)
    f = click.option("--trust-base", "trust_base", metavar="REF",
                     help="Read [trust] and the key files as committed at REF (a pull request's base), never "
                          "from the checkout under review.")(f)
    return click.option(
        "--trust", "trust", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
        help="Public key (PEM) of a trusted validator; repeatable. Adds to the [trust] keys.",
    )(f)


def custody(ws: Workspace, trust: tuple[Path, ...], base: str | None = None, config: Path | None = None) -> Custody:
    """The judge and the trusted keys: from --trust-config (or its variable), else as committed at
    --trust-base, else faultkit.toml here. With no list anywhere, the one trusted key is this user's
    own validator key: a local catalog admits what its own validator observed."""
    # the command layer hands the validator's judge and the labeller to the catalog, which imports neither
    # (both import the catalog)
    def relabel(folder: Path) -> str:
        return labels_text(label_bundle(folder, app_of(ws, folder)))

    return Custody(judge=judge_bundle, trusted=anchors(ws.root, trust, base, config), relabel=relabel)


@click.command("build")
@click.option(
    "--version",
    "version",
    help="Release version (default: <date of the newest verdict>-<content hash>).",
)
@click.option("--out", "out", type=click.Path(path_type=Path), help="Folder to write into (default: dist/).")
@trust_option
@json_option
def build_cmd(version: str | None, out: Path | None, trust: tuple[Path, ...], trust_base: str | None,
              trust_config: Path | None, as_json: bool) -> int:
    """Build dist/catalog-<version>.json from the entries whose admitting verdict is current.

    Every bundle is verified, its signer checked against the trusted keys, its sealed inputs
    compared with the entry and patch, and its verdict judged again. Entries left out are listed
    with the reason (invalid, no-verdict, rejected, flaky, stale-entry, stale-patch, no-evidence,
    untrusted, single-verdict: a bundle sealed under rules v3 needs a second verdict, validate
    --stability; validation-mismatch: the entry's validation block says what its bundle does not;
    stale-descriptor, stale-source, stale-build, stale-rules: the bundle was measured on another
    descriptor, pinned source, build commands or rule settings). An evidence bundle that no longer
    matches its manifest or verdict stops the build. On a checkout under review, take the trust
    anchors from its base (--trust-base) or from a file outside it (--trust-config).

    Example: faultkit catalog build --version 2025.1 --trust-base origin/main
    """
    ws = workspace()
    release = build_release(ws, custody(ws, trust, trust_base, trust_config), version)
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
def export_cmd(fmt: str, out: Path | None, namespace: str, duration: str | None, trust: tuple[Path, ...],
               trust_base: str | None, trust_config: Path | None) -> int:
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
        anchored = custody(ws, trust, trust_base, trust_config)
        objects, skipped = chaos_mesh(ws, anchored, namespace, seconds(duration) if duration else None)
        for s in skipped:
            console(stderr=True).print(f"not exported {s.id} ({s.action}): {s.reason}", markup=False)
        text = release_text(object_list(objects))
    else:
        ws = workspace()
        text = release_text(incident_records(ws, custody(ws, trust, trust_base, trust_config)))
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

