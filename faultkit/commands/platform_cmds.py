"""`faultkit up`, `faultkit status`, `faultkit down`: run an app on a platform (local or kubernetes)."""

from __future__ import annotations

import time

import click
from rich.table import Table

from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.commands.platform_options import PlatformChoice, platform_options
from faultkit.platforms.base import AppStatus, ServiceState, short_id


@click.command("up")
@click.option("--app", default="minishop", show_default=True, help="Application to run.")
@click.option(
    "--replicas",
    type=click.IntRange(min=1),
    default=None,
    help="Instances of every Deployment (default: each manifest's replicas).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=90.0,
    show_default=True,
    help="Seconds to wait for every service to become ready.",
)
@platform_options()
def up(app: str, replicas: int | None, timeout: float, platform: PlatformChoice) -> int:
    """Run an application's manifests (as local processes, or on a cluster) and wait until every service is ready.

    Example: faultkit up --app minishop --replicas 2
    """
    ws = workspace()
    opened = platform.open(ws)
    console(stderr=True).print(f"Bringing {app} up on the {opened.name} platform...")
    started = time.time()
    opened.up(app, replicas=replicas or 0, timeout=timeout)
    status = opened.status()
    entry = _entry(ws_app_entry(app), status)
    console().print(f"{app} is up: {len(status.services)} services ready in {time.time() - started:.1f}s "
                    f"{status.where}" + (f"; entry {entry}" if entry else ""))
    for site, other in sorted(status.sites.items()):
        console().print(f"  other site {site}: namespace {other.namespace} (observed, never changed)")
    return 0


def ws_app_entry(app: str) -> str:
    from faultkit.apps.descriptor import load_app

    return load_app(workspace(), app).entry


def _entry(entry: str, status: AppStatus) -> str | None:
    service = status.services.get(entry)
    return service.endpoint if service else None


@click.command("status")
@platform_options()
@json_option
def status(platform: PlatformChoice, as_json: bool) -> int:
    """Show the running application's services: instances, readiness, restarts, build, endpoint.

    Example: faultkit status --json
    """
    opened = platform.open(workspace())
    data = opened.status()
    if as_json:
        print_json(data.as_json())
        return 0
    if not data.up:
        console().print(f"Nothing is up on the {opened.name} platform.")
        for line in data.leftovers:
            console().print(f"  left behind: {line} (`faultkit down` sweeps it)", markup=False)
        return 0
    table = Table(title=f"{data.app} {data.where} ({data.phase})")
    for column in ("service", "ready", "restarts", "oom", "build"):
        table.add_column(column, no_wrap=True)
    table.add_column("endpoint", no_wrap=True, min_width=22)
    for name, svc in sorted(data.services.items()):
        insts = svc.instances
        table.add_row(name, f"{sum(i.ready for i in insts)}/{len(insts)}", str(sum(i.restarts for i in insts)),
                      str(sum(i.oom_kills for i in insts)), _builds(svc), svc.endpoint or "-")
    console().print(table)
    for note in data.notes:
        console().print(note)
    for site, info in sorted(data.sites.items()):
        console().print(f"other site {site}: namespace {info.namespace}, "
                        f"{'every pod ready' if info.ready else 'not every pod ready'}")
    return 0


def _builds(svc: ServiceState) -> str:
    builds = [svc.build] if svc.build else [i.build for i in svc.instances]
    return ",".join(sorted({short_id(b, 10).partition(":")[2] for b in builds if b})) or "-"


@click.command("down")
@platform_options()
def down(platform: PlatformChoice) -> int:
    """Stop the running application: every process the local platform started, or the namespace
    the kubernetes platform created (waiting until it is gone).

    Example: faultkit down
    """
    opened = platform.open(workspace())
    if not opened.is_up():
        opened.down()  # still sweeps what a crashed run may have left
        console().print(f"Nothing is up on the {opened.name} platform.")
        return 0
    app = opened.app()
    done = opened.down()
    console().print(f"{app} is down; {done}.")
    return 0


def register(group: click.Group) -> None:
    for command in (up, status, down):
        group.add_command(command)
