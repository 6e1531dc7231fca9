"""The live view: the invocation, the active faults and the next changes, on stderr."""

from __future__ import annotations

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from faultkit.replay.clock import Status


class LiveView:
    def __init__(self, title: str) -> None:
        self.title = title
        self.live = Live(Text(title), console=Console(stderr=True, highlight=False), refresh_per_second=4,
                         transient=True)

    def __enter__(self) -> LiveView:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(None, None, None)

    def show(self, s: Status) -> None:
        head = Text(f"{self.title}  invocation {s.invocation + 1}/{s.of}: {s.phase}", style="bold")
        active = Text(f"active ({len(s.active)}): " + (", ".join(s.active) or "none"))
        upcoming = Text("next: " + (", ".join(s.next_changes) or "no change"), style="dim")
        self.live.update(Group(head, active, upcoming))


def quiet(_s: Status) -> None:
    """No view (--json)."""
