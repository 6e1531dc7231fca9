"""`faultkit apps ...`: the application descriptors, their dependency scope, and the graph observed from traces."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from faultkit.apps.descriptor import AppDescriptor, app_names, load_app
from faultkit.apps.observed_graph import (
    OBSERVED_FILE,
    Pair,
    RecordedGraph,
    compare,
    load_observed,
    to_data,
    write_observed,
)
from faultkit.commands.common import console, json_option, print_json, seconds, workspace
from faultkit.errors import UsageError


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
    ws = workspace()
    a = load_app(ws, app)
    recorded = load_observed(ws, a.name)
    if as_json:
        print_json(
            {
                "observed": None if recorded is None else _observed_json(a, recorded),
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
    if recorded is not None:
        diff = compare(a, recorded.pairs)
        click.echo(f"observed {recorded.observed_at} for {recorded.duration_s:g} s ({OBSERVED_FILE}): "
                   f"{len(recorded.edges)} edges")
        click.echo(f"  undeclared: {_pairs(diff.undeclared)}")
        click.echo(f"  unobserved: {_pairs(diff.unobserved)}")
    return 0


def _attributes(given: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in given:
        key, eq, value = item.partition("=")
        if not (eq and key.strip() and value.strip()):
            raise UsageError(f"--scope {item!r}: expected KEY=VALUE, a resource attribute and its value "
                             "(e.g. k8s.namespace.name=shop)")
        out[key.strip()] = value.strip()
    return out


def _pairs(pairs: tuple[Pair, ...]) -> str:
    return ", ".join(f"{a} -> {b}" for a, b in pairs) or "none"


def _observed_json(app: AppDescriptor, recorded: RecordedGraph) -> dict[str, Any]:
    diff = compare(app, recorded.pairs)
    return {**to_data(recorded), "undeclared": [list(e) for e in diff.undeclared],
            "unobserved": [list(e) for e in diff.unobserved]}


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


@apps.command("observe")
@click.argument("app")
@click.option("--jaeger", "jaeger_url", envvar="FAULTKIT_JAEGER", show_envvar=True, metavar="URL",
              help="Jaeger's query URL (default: FAULTKIT_JAEGER, else the descriptor's signals.traces.jaeger).")
@click.option("--for", "period", default="30s", show_default=True, help="How long to watch the app (e.g. 20s, 2m).")
@click.option("--scope", "scope", multiple=True, metavar="KEY=VALUE",
              help="Read only traces of spans with this resource attribute, e.g. k8s.namespace.name=shop for one "
                   "instance on a shared Jaeger (repeatable; default: every instance's).")
@click.option("--write", is_flag=True, help=f"Record the graph in apps/APP/{OBSERVED_FILE} for apps show and lint.")
@json_option
def observe_cmd(app: str, jaeger_url: str | None, period: str, scope: tuple[str, ...], write: bool,
                as_json: bool) -> int:
    """Watch the running APP under its load, then compare the call graph its traces show with the
    descriptor's edges. Exit 1 when a call is observed that the descriptor does not declare.

    Example: faultkit apps observe minishop --jaeger http://127.0.0.1:16686 --for 1m --write
    """
    from faultkit.observe.graph_reader import jaeger_url as resolve
    from faultkit.observe.graph_reader import observe

    ws = workspace()
    a = load_app(ws, app)
    source = click.get_current_context().get_parameter_source("jaeger_url")
    url = resolve(jaeger_url, a, "FAULTKIT_JAEGER" if source == click.core.ParameterSource.ENVIRONMENT else "--jaeger")
    length = seconds(period)
    if length <= 0:
        raise UsageError(f"--for {period!r}: watch for longer than 0 s")
    attributes = _attributes(scope)
    with console(stderr=True).status(f"watching {a.name}") as status:
        seen = observe(url, a, length, progress=status.update, scope=attributes)
    written = write_observed(ws, seen.recorded) if write else None
    if as_json:
        print_json({**_observed_json(a, seen.recorded),
                    "written": None if written is None else written.relative_to(ws.root).as_posix()})
        return 1 if seen.diff.undeclared else 0
    table = Table("caller", "callee", "spans", "declared",
                  title=f"{a.name}: {seen.graph.spans} spans in {seen.graph.traces} traces over {length:g} s"
                        + "".join(f", {k}={v}" for k, v in seen.recorded.scope))
    for e in seen.graph.edges:
        table.add_row(e.caller, e.callee, str(e.spans), "yes" if (e.caller, e.callee) in a.edges else "NO")
    console().print(table)
    click.echo(f"undeclared: {_pairs(seen.diff.undeclared)}")
    click.echo(f"unobserved: {_pairs(seen.diff.unobserved)}")
    click.echo(f"external peers: {', '.join(seen.graph.external) or 'none'}")
    if written is not None:
        click.echo(f"wrote {written.relative_to(ws.root).as_posix()}")
    return 1 if seen.diff.undeclared else 0
