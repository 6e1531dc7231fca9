"""`faultkit report`: the catalog as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from faultkit.commands.common import console, workspace
from faultkit.report.data import collect
from faultkit.report.html import render
from faultkit.yamlio import atomic_write


@click.command("report")
@click.option("--out", "out", type=click.Path(path_type=Path), help="HTML file (default: dist/report.html).")
@click.option("--fault", "fault", metavar="ID", help="Plot this fault's windows (default: first with a bundle).")
def report_cmd(out: Path | None, fault: str | None) -> int:
    """Write one self-contained HTML page: coverage of services by category per app, the category
    mix against production shares, validation outcomes with each rejection's failing rule, and one
    fault's before/after windows against the screening thresholds.

    Example: faultkit report --out report.html --fault ms-cart-store-port
    """
    ws = workspace()
    path = out or ws.dist_dir / "report.html"
    atomic_write(path, render(collect(ws, fault)))
    console().print(f"{path}: written", markup=False)
    return 0
