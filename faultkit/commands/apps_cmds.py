"""`faultkit apps ...`: the application descriptors and their dependency scope."""

from __future__ import annotations

import click
from rich.table import Table

from faultkit.apps.descriptor import app_names, load_app
from faultkit.commands.common import console, json_option, print_json, workspace


@click.group()
def apps() -> None:
    """Application descriptors: services, dependency edges, scope."""


@apps.command("list")
@json_option
def list_cmd(as_json: bool) -> int:
    """List the applications of this catalog.

    Example: faultkit apps list
    """
    ws = workspace()
    rows = [load_app(ws, n) for n in app_names(ws)]
    if as_json:
        print_json(
            [{"name": a.name, "version": a.version, "services": len(a.services), "entry": a.entry} for a in rows]
        )
        return 0
    table = Table("app", "version", "services", "entry")
    for a in rows:
        table.add_row(a.name, a.version, str(len(a.services)), a.entry)
    console().print(table)
    return 0


@apps.command("show")
@click.argument("app")
@json_option
def show_cmd(app: str, as_json: bool) -> int:
    """Show an application's services, ports, callers and scope sizes.

    Example: faultkit apps show minishop
    """
    a = load_app(workspace(), app)
    if as_json:
        print_json(
            {
                "name": a.name,
                "version": a.version,
                "entry": a.entry,
                "edges": [list(e) for e in a.edges],
                "sites": [s.__dict__ for s in a.sites],
                "services": [
                    {
                        "name": s.name,
                        "language": s.language,
                        "workload": f"{s.workload_kind}/{s.workload}",
                        "ports": {p.name: p.port for p in s.ports},
                        "aliases": list(s.aliases),
                        "callees": [b for x, b in a.edges if x == s.name],
                        "scope": list(a.scope(s.name)),
                    }
                    for s in a.services
                ],
            }
        )
        return 0
    table = Table("service", "workload", "ports", "calls", "scope", title=f"{a.name} {a.version} (entry: {a.entry})")
    for s in a.services:
        calls = ", ".join(b for x, b in a.edges if x == s.name)
        ports = ", ".join(f"{p.name}:{p.port}" for p in s.ports)
        table.add_row(s.name, f"{s.workload_kind}/{s.workload}", ports, calls, str(len(a.scope(s.name))))
    console().print(table)
    return 0


@apps.command("scope")
@click.argument("app")
@click.argument("service")
@json_option
def scope_cmd(app: str, service: str, as_json: bool) -> int:
    """Print the affected scope of a fault at SERVICE: it and every service that reaches it.

    Example: faultkit apps scope minishop cartstore
    """
    scope = load_app(workspace(), app).scope(service)
    if as_json:
        print_json(list(scope))
    else:
        click.echo("\n".join(scope))
    return 0
