"""The live view of a running campaign (rich): progress, each worker's fault and stage with the
window's countdown, the outcomes so far, the ETA, and the last few events."""

from __future__ import annotations

import time

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from faultkit.campaigns.board import Board


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


def render(board: Board) -> RenderableType:
    total = len(board.plan.faults)
    with board.lock:
        done = board.done
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(board.outcomes.items())) or "none yet"
        workers = sorted(board.workers.items())
        events = list(board.events)
    head = Text(f"{board.plan.app}: {done}/{total} faults done ({outcomes}); ETA {duration(board.eta_s())}",
                style="bold")
    table = Table("worker", "fault", "stage", "left", "elapsed", box=None, pad_edge=False)
    now = time.time()
    for k, v in workers:
        left = duration(v.window_s - (now - v.since)) if v.window_s else ""
        elapsed = duration(now - v.started) if v.fault else ""
        table.add_row(str(k), v.fault or "-", v.stage, left, elapsed)
    return Group(head, table, *(Text(e, style="dim") for e in events[-5:]))
