"""`faultkit author ...`: code, config and direct faults; candidates."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from faultkit.apps.descriptor import load_app
from faultkit.authoring import code as code_fault
from faultkit.authoring.candidates import candidates, skipped_services, write_candidates
from faultkit.authoring.common import entry_path, render, write_new
from faultkit.authoring.config import plan_config
from faultkit.authoring.direct import plan_direct, platforms_note
from faultkit.authoring.drafts import drafts_dir
from faultkit.catalog.placeholders import todo_paths
from faultkit.catalog.rules.leakage import title_leaks
from faultkit.catalog.vocab import CATEGORIES, CONFIG_KINDS, LEVELS
from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.errors import UsageError
from faultkit.platforms import DEFAULT, PLATFORMS
from faultkit.workspace import Workspace


@click.group()
def author() -> None:
    """Write catalog entries: code patches, manifest settings, direct interventions, candidates."""


@author.command("code")
@click.option("--app", "app_name", help="Application, e.g. minishop.")
@click.option("--service", help="The service whose source the fault changes.")
@click.option("--id", "entry_id", help="The new entry's id (also its file name).")
@click.option("--finish", "finish_id", metavar="ID", help="Capture the edits of working copy ID.")
@click.option("--discard", "discard_id", metavar="ID", help="Delete working copy ID without writing anything.")
@click.option("--source", "source_root", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A checkout of the app's source (the folder the descriptor's services[].source are in).")
@json_option
def code_cmd(app_name: str | None, service: str | None, entry_id: str | None, finish_id: str | None,
             discard_id: str | None, source_root: Path | None, as_json: bool) -> int:
    """Author a code fault through a git working copy of the service's pinned source.

    \b
    Example:
      faultkit author code --app minishop --service cart --id minishop-cart-totals
      (edit the files it names under src/cart/, then)
      faultkit author code --finish minishop-cart-totals
    """
    ws = workspace()
    if discard_id:
        path = code_fault.discard(ws, discard_id)
        click.echo(f"Removed {path}")
    elif finish_id:
        _finish(ws, finish_id, as_json)
    elif app_name and service and entry_id:
        session = code_fault.start(ws, app_name, service, entry_id, source_root)
        checks = code_fault.check_commands(load_app(ws, app_name), service)
        if as_json:
            print_json({"id": session.id, "working_copy": str(session.path), "edit": str(session.edit_dir),
                        "checks": checks})
            return 0
        click.echo(f"Working copy of {session.app}/{session.source} ready. Edit the files under:\n"
                   f"  {session.edit_dir}\n"
                   + "".join(f"Run the service's own checks there: {' '.join(c)}\n" for c in checks)
                   + f"Only files under {session.source}/ may change. When done:\n"
                   f"  faultkit author code --finish {session.id}")
    else:
        raise UsageError("give --app, --service and --id to start, --finish ID to capture, or --discard ID")
    return 0


def _finish(ws: Workspace, entry_id: str, as_json: bool) -> None:
    done = code_fault.finish(ws, entry_id)
    rel = lambda p: p.relative_to(ws.root).as_posix()  # noqa: E731
    if as_json:
        print_json({"patch": rel(done.patch), "entry": rel(done.entry) if done.entry else None,
                    "files": list(done.files), "marker": done.marker, "todo": list(done.todos),
                    "leaks": [leak.message() for leak in done.leaks]})
        return
    click.echo(f"Wrote {rel(done.patch)} ({', '.join(done.files)})")
    if done.entry:
        click.echo(f"Wrote {rel(done.entry)}; marker {done.marker!r}")
        click.echo(f"Fill in: {', '.join(done.todos)}; then: faultkit catalog lint {rel(done.entry)}")
    else:
        click.echo(f"Kept the existing entry; check that code.marker still names text the patch adds "
                   f"(suggested: {done.marker!r})")
    for leak in done.leaks:
        console(stderr=True).print(f"[yellow]warning[/yellow] {escape(leak.message())}", markup=True)


@author.command("config")
@click.option("--app", "app_name", required=True)
@click.option("--workload", required=True, help="Workload name, or Service/<name> for a Service's field.")
@click.option("--container", help="Container (default: the workload's only container).")
@click.option("--field", "field_path", required=True, help="Dotted path, e.g. env.CART_ADDR, resources.limits.memory.")
@click.option("--value", help="The new value (omit for --kind cleared-value).")
@click.option("--kind", required=True, type=click.Choice(CONFIG_KINDS))
@click.option("--id", "entry_id", help="Entry id (default: <app>-<workload>-<field>-<n>).")
@click.option("--category", type=click.Choice(CATEGORIES), help="Override the category the kind implies.")
@click.option("--dry-run", is_flag=True, help="Print the entry instead of writing it.")
@json_option
def config_cmd(app_name: str, workload: str, container: str | None, field_path: str, value: str | None, kind: str,
               entry_id: str | None, category: str | None, dry_run: bool, as_json: bool) -> int:
    """Author a config fault: one setting written directly in a manifest.

    Refused: Secrets and ConfigMaps, valueFrom references, envFrom, mounted files, telemetry
    settings and feature-flag controls; each refusal says why.

    Example: faultkit author config --app minishop --workload cart --field env.CARTSTORE_ADDR
    --value cartstore:6380 --kind dependency-port
    """
    ws = workspace()
    data = plan_config(ws, app_name, workload, container, field_path, value, kind, entry_id, category)
    _emit(ws, data, dry_run, as_json)
    return 0


@author.command("direct")
@click.option("--app", "app_name", required=True)
@click.option("--service", required=True)
@click.option("--action", required=True, help="One of the fixed actions (faultkit author direct --help lists them).")
@click.option("--param", "params", multiple=True, metavar="K=V", help="An action parameter; repeatable.")
@click.option("--level", type=click.Choice(LEVELS), help="Entity level (default: the action's first level).")
@click.option("--id", "entry_id", help="Entry id (default: <app>-<service>-<action>-<n>).")
@click.option("--dry-run", is_flag=True, help="Print the entry instead of writing it.")
@json_option
def direct_cmd(app_name: str, service: str, action: str, params: tuple[str, ...], level: str | None,
               entry_id: str | None, dry_run: bool, as_json: bool) -> int:
    """Author a direct fault: cpu-stress, memory-stress, instance-kill, instance-failure,
    network-delay, network-loss, dns-error, disk-fill or io-delay.

    Example: faultkit author direct --app minishop --service cart --action cpu-stress --param workers=4
    """
    ws = workspace()
    data = plan_direct(ws, app_name, service, action, params, level, entry_id)
    _emit(ws, data, dry_run, as_json, note=platforms_note(action))
    return 0


def _emit(ws: Workspace, data: dict[str, Any], dry_run: bool, as_json: bool, note: str = "") -> None:
    path = entry_path(ws, data["app"], data["id"])
    todos = [p for p, _ in todo_paths(data)]
    if not dry_run:
        write_new(path, render(data))
    if as_json:
        print_json({"entry": data, "path": path.relative_to(ws.root).as_posix(), "written": not dry_run,
                    "todo": todos, "note": note})
        return
    if dry_run:
        click.echo(render(data), nl=False)
    else:
        click.echo(f"Wrote {path.relative_to(ws.root).as_posix()}")
    for line in [note, f"Fill in: {', '.join(todos)}" if todos else ""]:
        if line:
            click.echo(line, err=dry_run)
    for leak in title_leaks(ws.root, data["title"]):
        console(stderr=True).print(f"[yellow]warning[/yellow] {escape(leak.message())}", markup=True)


@author.command("candidates")
@click.option("--app", "app_name", required=True)
@click.option("--platform", type=click.Choice(PLATFORMS), default=DEFAULT, show_default=True,
              help="Direct actions this platform can carry out (nothing is opened: the platforms' own options "
                   "do not apply).")
@click.option("--write", is_flag=True, help="Write the new candidates to catalog/<app>/ (never overwrites).")
@click.option("--drafts", is_flag=True, help="Write them as drafts to drafts/<app>/ instead, outside the catalog.")
@json_option
def candidates_cmd(app_name: str, platform: str, write: bool, drafts: bool, as_json: bool) -> int:
    """List every config and direct fault the rules allow for an application.

    Example: faultkit author candidates --app minishop --write
    """
    ws = workspace()
    folder = drafts_dir(ws, app_name) if drafts else None
    app = load_app(ws, app_name)
    found = candidates(ws, app_name, platform, folder, app)
    skipped = skipped_services(app)
    write = write or drafts
    written = write_candidates(ws, found, folder) if write else []
    if as_json:
        print_json({"candidates": [{"id": c.id, "status": c.status, "note": c.note, "entry": c.data} for c in found],
                    "skipped": [{"service": s, "reason": r} for s, r in skipped],
                    "written": [p.relative_to(ws.root).as_posix() for p in written]})
        return 0
    for c in found:
        d = c.data
        click.echo(f"{c.status:9} {c.id:60} {d.get('category', ''):18} {d.get('level', ''):8} {c.note}")
    for service, reason in skipped:
        click.echo(f"skipped: {service}: {reason}")
    counts = Counter(c.status for c in found)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    click.echo(f"{len(found)} candidates ({summary}); {len(skipped)} services skipped"
               + (f"; wrote {len(written)}" if write else ""))
    return 0


