"""Starting and ending processes so that none outlives the supervisor.

Every child gets its own session (signals go to its whole group) and a parent-death signal
(PR_SET_PDEATHSIG=SIGKILL), so a crashed supervisor leaves nothing running. The parent-death
signal fires when the *thread* that forked the child ends, so all children are forked by one
long-lived spawner thread. Every pid is also appended to a record file, which `down` uses to
verify (and, after a supervisor crash, finish) the cleanup.
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import signal
import subprocess
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import psutil

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:  # not Linux: the supervisor's SIGTERM handler and `down` still clean up
        pass


class Spawner:
    """Forks every child from one thread that lives as long as the supervisor."""

    def __init__(self, record: Path) -> None:
        self.record = record
        self._q: queue.Queue[tuple[dict[str, Any], Future[subprocess.Popen[bytes]]]] = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._loop, daemon=True, name="spawner").start()

    def _loop(self) -> None:
        while True:
            kwargs, fut = self._q.get()
            try:
                proc = subprocess.Popen(
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                    stdin=subprocess.DEVNULL,
                    **kwargs,
                )
                self._remember(proc.pid)
                fut.set_result(proc)
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                fut.set_exception(e)

    def spawn(self, args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        fut: Future[subprocess.Popen[bytes]] = Future()
        self._q.put(({"args": args, **kwargs}, fut))
        return fut.result(timeout=30)

    def _remember(self, pid: int) -> None:
        try:
            started = started_ticks(pid)
        except OSError:
            return
        with self._lock, open(self.record, "a") as fh:
            fh.write(json.dumps({"pid": pid, "started": started}) + "\n")


def started_ticks(pid: int) -> int:
    """When the process started, in clock ticks since boot (/proc/PID/stat's starttime). psutil's
    create_time adds the boot time as the wall clock places it now, which moves when the clock is
    adjusted: a recorded process then looked gone, and recovery left it running."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def recorded_alive(record: Path) -> list[psutil.Process]:
    """Processes named in the record file that still run (same pid and start time)."""
    out = []
    try:
        lines = record.read_text().splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        try:
            entry = json.loads(line)
            p = psutil.Process(int(entry["pid"]))
            if started_ticks(p.pid) == int(entry["started"]) and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except (ValueError, KeyError, OSError, psutil.Error):
            continue
    return out


def signal_group(pid: int, sig: int) -> None:
    """Signal the process group led by pid (each child leads its own), falling back to the pid."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def terminate(proc: subprocess.Popen[bytes], grace: float = 5.0) -> int | None:
    """SIGTERM the group, SIGKILL after `grace` seconds; returns the exit status."""
    if proc.poll() is None:
        signal_group(proc.pid, signal.SIGTERM)
        signal_group(proc.pid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            signal_group(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    else:
        signal_group(proc.pid, signal.SIGKILL)  # leftovers of its group
    return proc.returncode


PAGE = os.sysconf("SC_PAGE_SIZE")


def _children(pid: int) -> list[int]:
    """Direct children from /proc/<pid>/task/*/children: no scan of every process on the machine."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
        except OSError:
            continue
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return 0


def tree_rss(pids: list[int]) -> int:
    """Resident memory of the processes and all their descendants, in bytes.

    Sampled five times a second per container, so it reads /proc directly; psutil's
    children(recursive=True) would walk every process of the machine each time.
    """
    if not os.path.exists("/proc/self/statm"):
        return _tree_rss_psutil(pids)
    seen: set[int] = set()
    todo = list(pids)
    total = 0
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _rss(pid)
        todo.extend(_children(pid))
    return total


def _tree_rss_psutil(pids: list[int]) -> int:
    seen: set[int] = set()
    total = 0
    for pid in pids:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        for p in procs:
            if p.pid in seen:
                continue
            seen.add(p.pid)
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
    return total


def wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    return alive


def exit_status(returncode: int) -> int:
    """Popen's -N for a signal N becomes the shell's 128+N (137 for SIGKILL)."""
    return 128 - returncode if returncode < 0 else returncode


def now() -> float:
    return time.time()
