"""`faultkit label`: grounded labels (key evidence, causal chain, checkpoints) from admitting bundles."""

from __future__ import annotations

import click
from rich.table import Table

from faultkit.commands.common import console, json_option, print_json, workspace
from faultkit.labels.catalog_io import label_fault, select, write_labels


@click.command("label")
@click.argument("fault", required=False)
@click.option("--all", "every", is_flag=True, help="Every admitted fault with a bundle here.")
@click.option("--write", is_flag=True, help="Write labels.json beside each verdict (outside the sealed manifest).")
@json_option
def label_cmd(fault: str | None, every: bool, write: bool, as_json: bool) -> int:
    """Derive a fault's labels from its admitting evidence bundle alone: the key evidence by modality,
    the causal chain cause -> propagation -> impact, and numeric checkpoints that held in every
    counted cycle.

    Exits 1 when a stored labels.json differs from the recomputation (and --write was not given).

    Example: faultkit label minishop-code-checkout-shipping-quote --write
    """
    ws = workspace()
    items = [label_fault(ws, e) for e in select(ws, fault, every)]
    if write:
        for item in items:
            write_labels(item)
    stale = [i.fault for i in items if i.stored is False and not write]
    if as_json:
        print_json({"labels": [i.labels for i in items] if fault else None,
                    "faults": [{"fault": i.fault, "checkpoints": i.labels["counts"]["checkpoints"],
                                "stored": "written" if write else {True: "same", False: "differs", None: "none"}[
                                    i.stored]} for i in items]})
    else:
        out = console()
        for item in items:
            table = Table("step", "service", "signal", "check", "observed (cycle: before -> after)",
                          title=f"{item.fault}: {item.labels['counts']['checkpoints']} checkpoints")
            for step in item.labels["chain"]:
                rows = step["checkpoints"] or [None]
                for cp in rows:
                    check = f"{cp['comparator']} {cp['value']:g} {cp['unit']}" if cp else "-"
                    seen = ", ".join(f"{o['cycle']}: {o['before']:g} -> {o['after']:g}" for o in cp["observed"]) \
                        if cp else ""
                    table.add_row(step["role"], step["service"], cp["signal"] if cp else "(nothing moved here)",
                                  check, seen)
            out.print(table)
        if write:
            out.print(f"{len(items)} labels.json written")
        for f in stale:
            out.print(f"[red]{f}: the stored labels.json differs from the recomputation; run with --write[/red]")
    return 1 if stale else 0
