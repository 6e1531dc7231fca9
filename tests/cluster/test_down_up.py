"""`cluster` itself: up when up, a crashed component in status, and down leaving nothing behind.

Runs after test_cluster.py (file order) and ends with the cluster up again, so a later test module
still finds it; `down --keep` keeps the certificates, so clients made earlier stay valid.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import psutil
import pytest

from .conftest import cluster, kubeconfig_path, wait_until

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]


def _state() -> Path:
    """The state folder, read without the health check (a test below leaves a component dead)."""
    env = cluster("env")
    assert env.returncode == 0, env.stderr
    return Path(env.stdout.strip().removeprefix("export KUBECONFIG=")).parent


def _cluster_processes(state: Path, cache: Path) -> list[str]:
    found = []
    for proc in psutil.process_iter(["exe", "cmdline", "pid"]):
        exe, cmdline = proc.info.get("exe") or "", " ".join(proc.info.get("cmdline") or [])
        if exe.startswith(str(cache) + "/") or (str(state) in cmdline and "pytest" not in cmdline):
            found.append(f"{proc.info['pid']} {exe or cmdline}")
    return found


def test_up_when_up_says_so() -> None:
    kubeconfig_path()  # fails clearly when no cluster is up
    again = cluster("up")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "cluster: already up"


def test_status_reports_a_crashed_component() -> None:
    state = _state()
    pid = int((state / "run" / "kube-scheduler.pid").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, 10,
               "the scheduler to die")
    status = cluster("status")
    assert status.returncode == 1
    assert any(line.startswith("kube-scheduler") and "NOT RUNNING" in line for line in status.stdout.splitlines())
    assert "cluster: DEGRADED" in status.stdout
    refused = cluster("up")
    assert refused.returncode == 1
    assert "partly up (kube-scheduler not running)" in refused.stderr


def test_down_leaves_nothing_and_up_works_again() -> None:
    state = _state()
    cache = Path(cluster("build").stdout.strip().rsplit("-> ", 1)[1]).parent.parent
    down = cluster("down", "--keep")
    assert down.returncode == 0, down.stderr
    assert _cluster_processes(state, cache) == []
    chains = subprocess.run(["iptables-save"], capture_output=True, text=True, check=True).stdout
    assert [line for line in chains.splitlines() if line.startswith(":KUBE-")] == []
    mounts = Path("/proc/self/mountinfo").read_text()
    assert [line for line in mounts.splitlines() if f" {state}/" in line] == []
    assert subprocess.run(["ip", "link", "show", "fkc0"], capture_output=True).returncode != 0
    assert list(Path("/sys/fs/cgroup").glob("*/kubepods")) == []
    assert cluster("status").stdout.strip() == "cluster: down"
    up = cluster("up", timeout=900)
    assert up.returncode == 0, up.stderr
    assert cluster("status").returncode == 0
