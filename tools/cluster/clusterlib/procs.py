"""Components as host processes: started detached with a log each, tracked by pid and start time."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import psutil

from .layout import Layout


def _pidfile(layout: Layout, name: str) -> Path:
    return layout.run / f"{name}.pid"


def start(layout: Layout, name: str, argv: list[str]) -> int:
    env = dict(os.environ)
    # containerd looks its shim up on PATH; the shim finds runc by the configured BinaryName.
    env["PATH"] = f"{layout.bin}:{env.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}"
    with open(layout.logs / f"{name}.log", "ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                cwd=layout.state, env=env, start_new_session=True)
    _pidfile(layout, name).write_text(f"{proc.pid} {_started(proc.pid)}\n")
    return proc.pid


def _started(pid: int) -> int:
    """When the process started, in clock ticks since boot (/proc/PID/stat's starttime). psutil's
    create_time adds the boot time as the wall clock places it now, which moves when the clock is
    adjusted: mid-run, a running containerd then looked gone and `load` refused."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def process(layout: Layout, name: str) -> psutil.Process | None:
    """The running process of a component, or None (never started, exited, or its pid reused)."""
    path = _pidfile(layout, name)
    if not path.is_file():
        return None
    pid_text, started_text = path.read_text().split()
    try:
        proc = psutil.Process(int(pid_text))
        if _started(proc.pid) != int(started_text) or proc.status() == psutil.STATUS_ZOMBIE:
            return None
    except (ValueError, OSError, psutil.Error):
        return None
    return proc


def recorded(layout: Layout, name: str) -> bool:
    return _pidfile(layout, name).is_file()


def stop(layout: Layout, name: str, timeout: float = 20.0) -> None:
    proc = process(layout, name)
    if proc is not None:
        terminate([proc], timeout)
    _pidfile(layout, name).unlink(missing_ok=True)


def terminate(procs: list[psutil.Process], timeout: float) -> None:
    """SIGTERM, then SIGKILL whatever is left after `timeout` seconds."""
    for proc in procs:
        try:
            proc.send_signal(signal.SIGTERM)
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=5)


def strays(layout: Layout) -> list[psutil.Process]:
    """Processes running one of the cluster's binaries that no pid file tracks (containerd's shims)."""
    found = []
    bin_dir = str(layout.bin.parent.parent)  # any cache key: an older build's shim counts too
    for proc in psutil.process_iter(["exe"]):
        exe = proc.info.get("exe") or ""
        if exe.startswith(bin_dir + "/"):
            found.append(proc)
    return found
