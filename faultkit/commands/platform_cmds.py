"""`faultkit up`, `faultkit status`, `faultkit down`: run an app on the local platform."""

from __future__ import annotations

import time

import click
from rich.table import Table

from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.platforms.local import LocalPlatform, local_platform
from faultkit.platforms.local.status import SupervisorStatus


def _platform() -> LocalPlatform:
    return local_platform(workspace())


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
def up(app: str, replicas: int | None, timeout: float) -> int:
    """Run an application's manifests as local processes and wait until every service is ready.

    Example: faultkit up --app minishop --replicas 2
    """
    platform = _platform()
    console(stderr=True).print(f"Bringing {app} up on the local platform...")
    started = time.time()
    platform.up(app, replicas=replicas or 0, timeout=timeout)
    status = platform.status()
    console().print(
        f"{app} is up: {len(status['services'])} services ready in {time.time() - started:.1f}s; entry {_entry(status)}"
    )
    return 0


def _entry(status: SupervisorStatus) -> str:
    from faultkit.apps.descriptor import load_app

    app = load_app(workspace(), status["app"])
    service = status["services"].get(app.entry)
    return (service["endpoint"] if service else None) or "(none)"


@click.command("status")
@json_option
def status(as_json: bool) -> int:
    """Show the running application's services: instances, readiness, restarts, build, endpoint.

    Example: faultkit status --json
    """
    platform = _platform()
    if not platform.is_up():
        if as_json:
            print_json({"up": False})
        else:
            console().print("Nothing is up on the local platform.")
        return 0
    data = platform.status()
    if as_json:
        print_json({"up": True, **data})
        return 0
    table = Table(title=f"{data['app']} on the local platform ({data['phase']})")
    for column in ("service", "ready", "restarts", "oom", "build"):
        table.add_column(column, no_wrap=True)
    table.add_column("endpoint", no_wrap=True, min_width=22)
    for name, svc in sorted(data["services"].items()):
        insts = svc["instances"]
        table.add_row(
            name,
            f"{sum(i['ready'] for i in insts)}/{len(insts)}",
            str(sum(i["restarts"] for i in insts)),
            str(sum(i["oom_kills"] for i in insts)),
            (svc["build"] or "")[7:17],
            svc["endpoint"] or "-",
        )
    console().print(table)
    console().print(f"memory limits: enforced; cpu limits: {data.get('cpu_limits', 'not enforced')}")
    return 0


@click.command("down")
def down() -> int:
    """Stop the running application and every process the local platform started.

    Example: faultkit down
    """
    platform = _platform()
    if not platform.is_up():
        platform.down()  # still sweeps what a crashed supervisor may have left
        console().print("Nothing is up on the local platform.")
        return 0
    app = platform.app()
    platform.down()
    console().print(f"{app} is down; every process it started has exited.")
    return 0


def register(group: click.Group) -> None:
    for command in (up, status, down):
        group.add_command(command)
