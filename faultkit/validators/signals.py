"""SIGTERM and the overall timeout unwind a validation like Ctrl-C, so its `finally` reverts."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Interrupted(BaseException):
    """SIGTERM or the overall timeout: unwind like Ctrl-C so every change is reverted."""


@contextmanager
def signals_unwind(timeout_s: float | None) -> Iterator[None]:
    """Within the block, SIGTERM and (after `timeout_s`) SIGALRM raise Interrupted."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted("timeout" if signum == signal.SIGALRM else "terminated")

    old_term = signal.signal(signal.SIGTERM, stop)
    old_alarm = signal.signal(signal.SIGALRM, stop)
    if timeout_s:
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGALRM, old_alarm)
