"""Memory limits by sampling: a container's process tree over its limit is OOM-killed.

The local platform has no memory cgroup to lean on everywhere, so it samples the resident memory
of the container's process tree (plus the helper processes direct actions attach to it) every
200 ms and reports when it is over the limit; the caller kills it with SIGKILL (exit 137).
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable

from faultkit.platforms.local import processes

SAMPLE_S = 0.2


def watch(
    proc: subprocess.Popen[bytes],
    limit: int | None,
    extra_pids: Callable[[], list[int]],
    stop: threading.Event,
    on_over_limit: Callable[[int], None],
    sample_s: float = SAMPLE_S,
) -> int:
    """Wait for `proc` to exit, calling `on_over_limit(rss)` each sample it is over `limit` bytes.

    Returns its return code; when `stop` is set, waits for the exit the stopper brings about.
    """
    while True:
        rc = proc.poll()
        if rc is not None:
            return rc
        if limit is not None and not stop.is_set():
            rss = processes.tree_rss([proc.pid, *extra_pids()])
            if rss > limit:
                on_over_limit(rss)
        if stop.wait(sample_s):
            return proc.wait()
