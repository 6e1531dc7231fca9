"""What the node itself shows about a pod, read from the host (the one-node cluster runs here, as root):
its containers' cgroups, processes, CPU and memory use, and its network namespace's iptables rules.
The action tests check the agent's work through these, not through the agent."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from faultkit.platforms.kubernetes import KubernetesPlatform

CGROUP = Path("/sys/fs/cgroup")


def pod_of(shop: KubernetesPlatform, service: str) -> dict[str, Any]:
    slots = shop._slot_pods(service)
    return slots[f"{service}-0"]


def container_id(pod: dict[str, Any]) -> str:
    [status] = pod["status"]["containerStatuses"]
    return str(status["containerID"]).split("://", 1)[1]


def cgroup(controller: str, cid: str) -> Path:
    [found] = list((CGROUP / controller / "kubepods").glob(f"**/{cid}"))
    return found


def procs(cid: str) -> list[int]:
    return sorted(int(p) for p in (cgroup("pids", cid) / "cgroup.procs").read_text().split())


def main_pid(cid: str) -> int:
    pids = procs(cid)
    return min(p for p in pids if ppid(p) not in pids)


def ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def cpu_cores(cid: str, seconds: float = 3.0) -> float:
    """CPU the container's cgroup used over `seconds`, in cores."""
    usage = cgroup("cpuacct", cid) / "cpuacct.usage"
    a, t = int(usage.read_text()), time.monotonic()
    time.sleep(seconds)
    return (int(usage.read_text()) - a) / 1e9 / (time.monotonic() - t)


def memory_mib(cid: str) -> float:
    return int((cgroup("memory", cid) / "memory.usage_in_bytes").read_text()) / 2**20


def rules(pid: int) -> str:
    """iptables-save of the process's network namespace ('' when it has no table)."""
    out = subprocess.run(["nsenter", "-t", str(pid), "-n", "iptables-save"], capture_output=True, text=True,
                         check=True).stdout
    return "\n".join(ln for ln in out.splitlines() if not ln.startswith("#"))


def tagged(handle: str) -> list[int]:
    """Host pids of the processes the node agent started for one action: it marks each with
    NODE_TASK=<tag>, the handle's last part. Only that action's: other modules' tests act on the
    same node at the same time."""
    want = b"NODE_TASK=" + handle.rsplit("-", 1)[1].encode()
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if want in (entry / "environ").read_bytes().split(b"\0"):
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


def in_netns(pid: int, code: str, timeout: float = 120) -> str:
    """Run Python code in the process's network namespace (from the host, not through the agent)."""
    done = subprocess.run(["nsenter", "-t", str(pid), "-n", "python3", "-c", code], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


CONNECTS = """
import socket
host, port, n = '{host}', {port}, {n}
failed = 0
for _ in range(n):
    s = socket.socket(); s.settimeout({timeout})
    try:
        s.connect((host, port))
    except OSError:
        failed += 1
    finally:
        s.close()
print(failed / n)
"""


def failed_connects(pid: int, host: str, port: int, n: int = 100, timeout: float = 0.25) -> float:
    """Share of TCP connects to host:port, made inside the pod's netns, that got no answer in `timeout`."""
    return float(in_netns(pid, CONNECTS.format(host=host, port=port, n=n, timeout=timeout)))
