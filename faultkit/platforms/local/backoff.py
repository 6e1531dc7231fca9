"""The restart back-off of a container, as a kubelet keeps it (CrashLoopBackOff).

The first restart waits 0.5 s, each further one twice as long up to 10 s; a container that ran
for 30 s before it exited starts over at 0.5 s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BACKOFF_START, BACKOFF_CAP, BACKOFF_RESET_AFTER = 0.5, 10.0, 30.0


@dataclass
class Backoff:
    start: float = BACKOFF_START
    cap: float = BACKOFF_CAP
    reset_after: float = BACKOFF_RESET_AFTER
    _next: float = field(init=False)

    def __post_init__(self) -> None:
        self._next = self.start

    def after_exit(self, uptime: float) -> float:
        """Seconds to wait before restarting a container that exited after `uptime` seconds up."""
        if uptime >= self.reset_after:
            self._next = self.start
        delay = self._next
        self._next = min(self._next * 2, self.cap)
        return delay
