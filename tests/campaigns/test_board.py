"""The live view's data: workers' stages with the window countdown, the outcomes, the ETA."""

from __future__ import annotations

from rich.console import Console

from faultkit.campaigns.board import Board
from faultkit.campaigns.plan import Plan, PlannedFault
from faultkit.campaigns.view import duration, render


def plan(workers: int) -> Plan:
    faults = (PlannedFault("a-config", "config", "dependency", 90.0), PlannedFault("b-code", "code", "code-bug", 60.0),
              PlannedFault("c-direct", "direct", "infrastructure", 60.0))
    return Plan(app="minishop", platform="local", workers=workers, window_s=10, interval_s=1, repeat=1, attempts=2,
                max_load=None, faults=faults, overheads={})


def text(board: Board) -> str:
    console = Console(width=120, record=True)
    console.print(render(board))
    return console.export_text()


def test_eta_uses_measured_times_per_mechanism_once_there_are_some():
    board = Board(plan(2))
    board.remaining = {"a-config", "b-code", "c-direct"}
    assert board.eta_s() == (90 + 60 + 60) / 2
    board.finished(PlannedFault("c-direct", "direct", "infrastructure", 60.0), "admitted", 20.0, final=True)
    # b-code is still planned at 60 s; the config fault too; direct faults are measured now
    assert board.eta_s() == (90 + 60) / 2
    assert board.done == 1 and board.outcomes == {"admitted": 1}


def test_a_running_fault_counts_only_what_is_left_of_it():
    board = Board(plan(1))
    board.remaining = {"a-config"}
    board.worker(0, "a-config", "window after-1", 10.0)
    board.workers[0].started -= 30  # began half a minute ago
    assert 59 <= board.eta_s() <= 60.5


def test_the_view_shows_each_worker_with_its_window_countdown():
    board = Board(plan(2))
    board.remaining = {"a-config", "b-code", "c-direct"}
    board.worker(0, "a-config", "window before-1", 10.0)
    board.worker(1, None, "bringing the app up")
    board.event("up [1]: minishop up")
    shown = text(board)
    assert "minishop: 0/3 faults done (none yet); ETA" in shown
    assert "a-config" in shown and "window before-1" in shown and "bringing the app up" in shown
    assert "0m09s" in shown or "0m10s" in shown  # the countdown of a 10 s window just begun
    assert "up [1]: minishop up" in shown
    assert duration(3725) == "1h02m" and duration(65) == "1m05s"
