"""`schedule show --png`: active faults over the run, stacked by category (needs matplotlib)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from faultkit.catalog.vocab import CATEGORIES
from faultkit.errors import FaultkitError
from faultkit.schedules.summary import timeline
from faultkit.yamlio import atomic_write

COLOURS = {"code-bug": "#d62728", "dependency": "#ff7f0e", "infrastructure": "#8c564b",
           "deployment": "#9467bd", "configuration-bug": "#1f77b4",
           "database-network": "#17becf", "authentication": "#2ca02c"}


def write_png(doc: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed; must precede pyplot
        import matplotlib.pyplot as plt
    except ImportError:
        raise FaultkitError("--png needs matplotlib, which is not installed; "
                            "run `pip install faultkit[plot]`") from None
    rows = timeline(doc)
    minutes = [r.t / 60 for r in rows]
    width = doc["params"]["interval_s"] / 60
    fig, ax = plt.subplots(figsize=(10, 4), dpi=100)
    bottom = [0] * len(rows)
    for category in CATEGORIES:
        heights = [r.active.count(category) for r in rows]
        if any(heights):
            ax.bar(minutes, heights, width=width, bottom=bottom, align="edge",
                   color=COLOURS[category], label=category, linewidth=0)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.axvline(doc["params"]["injection_minutes"], color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("minutes (one bar per agent invocation)")
    ax.set_ylabel("active faults")
    ax.set_title(f"{doc['app']} {doc['params']['preset']} seed {doc['seed']} "
                 f"(release {doc['release']['version']})")
    ax.legend(fontsize="small", loc="upper left")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    atomic_write(path, buffer.getvalue())
