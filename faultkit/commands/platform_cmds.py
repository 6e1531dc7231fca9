"""`faultkit up`, `faultkit status`, `faultkit down`: run an app on the local or the kubernetes platform."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.table import Table

from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.extras import require
from faultkit.platforms.base import short_id
from faultkit.platforms.local import LocalPlatform, local_platform
from faultkit.platforms.local.status import SupervisorStatus


def _platform() -> LocalPlatform:
    return local_platform(workspace())


platform_choice = click.option("--platform", "platform_name", type=click.Choice(("local", "kubernetes")),
                               default="local", show_default=True, help="Where the application runs.")


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
@platform_choice
@click.option("--namespace", default=None, help="kubernetes: the namespace to create (default: the app's name).")
@click.option("--adopt", default=None, metavar="NAMESPACE",
              help="kubernetes: take over an app deployed there by other tooling; only what a fault names is patched.")
@click.option("--kubeconfig", default=None, help="kubernetes: kubeconfig file (default: $KUBECONFIG, ~/.kube/config).")
@click.option("--context", default=None, help="kubernetes: kubeconfig context (default: the current one).")
@click.option("--load", "loader", default=None, envvar="FAULTKIT_KUBERNETES_LOAD", metavar="COMMAND",
              help="kubernetes: command that puts a built image into the cluster, run as `COMMAND IMAGE` "
                   "(e.g. `kind load docker-image`); without it the cluster pulls the tags.")
@click.option("--prometheus", default=None, envvar="FAULTKIT_PROMETHEUS", metavar="URL",
              help="kubernetes: read request counters by PromQL from this Prometheus (it must scrape the app's pods "
                   "with `namespace` and `pod` labels) instead of through the API server's pod proxy.")
@click.option("--existing", is_flag=True, envvar="FAULTKIT_KUBERNETES_EXISTING",
              help="kubernetes: deploy into --namespace, which exists already (made for it, e.g. by a campaign Job); "
                   "`down` deletes the app, not the namespace.")
@click.option("--images", "images_file", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              envvar="FAULTKIT_KUBERNETES_IMAGES",
              help="kubernetes: JSON file mapping each service to a prebuilt image the nodes have; nothing is built.")
def up(app: str, replicas: int | None, timeout: float, platform_name: str, namespace: str | None, adopt: str | None,
       kubeconfig: str | None, context: str | None, loader: str | None, prometheus: str | None, existing: bool,
       images_file: Path | None) -> int:
    """Run an application's manifests (as local processes, or on a cluster) and wait until every service is ready.

    Example: faultkit up --app minishop --replicas 2
    """
    if platform_name == "kubernetes":
        require("kubernetes", "the kubernetes platform")
        from faultkit.commands import kubernetes_view

        kubernetes_view.up(app, replicas or 1, timeout, namespace, adopt, kubeconfig, context, loader, existing,
                           images_file, prometheus)
        return 0
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
@platform_choice
@json_option
def status(platform_name: str, as_json: bool) -> int:
    """Show the running application's services: instances, readiness, restarts, build, endpoint.

    Example: faultkit status --json
    """
    if platform_name == "kubernetes":
        require("kubernetes", "the kubernetes platform")
        from faultkit.commands import kubernetes_view

        kubernetes_view.status(as_json)
        return 0
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
            short_id(svc["build"] or "", 10).partition(":")[2],
            svc["endpoint"] or "-",
        )
    console().print(table)
    console().print(f"memory limits: enforced; cpu limits: {data.get('cpu_limits', 'not enforced')}")
    return 0


@click.command("down")
@platform_choice
def down(platform_name: str) -> int:
    """Stop the running application: every process the local platform started, or the namespace
    the kubernetes platform created (waiting until it is gone).

    Example: faultkit down
    """
    if platform_name == "kubernetes":
        require("kubernetes", "the kubernetes platform")
        from faultkit.commands import kubernetes_view

        kubernetes_view.down()
        return 0
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
