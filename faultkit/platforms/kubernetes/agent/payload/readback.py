"""What of a stopped action a node still shows, read back (issue 29): processes carrying its tag
(stress workers, the packet holder), its chain or the jump to it in the pod's netns, and processes of
the container still frozen. Prints a JSON answer as nodeagent.py does; an empty list: nothing remains.

    python3 readback.py TAG ACTION CONTAINER POD_UID
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the package's name for the script that sits beside this one in the agent's image
    from faultkit.platforms.kubernetes.agent.payload.nodeagent import (
        Refused,
        _ipt,
        cgroup_dirs,
        chain_of,
        main_pid,
        procs,
        tagged,
    )
else:
    from nodeagent import Refused, _ipt, cgroup_dirs, chain_of, main_pid, procs, tagged


def state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def network(tag: str, pod_uid: str) -> list[str]:
    try:
        netns = f"/proc/{main_pid(cgroup_dirs(pod_uid))}/ns/net"
    except Refused:
        return []  # the pod is gone, and its netns with it
    chain, out = chain_of(tag), []
    if _ipt(netns, "-C", "INPUT", "-j", chain, check=False).returncode == 0:
        out.append(f"INPUT still jumps to {chain} in pod {pod_uid}'s network namespace")
    if _ipt(netns, "-L", chain, "-n", check=False).returncode == 0:
        out.append(f"chain {chain} is still in pod {pod_uid}'s network namespace")
    return out


def frozen(container: str) -> list[str]:
    try:
        pids = procs(cgroup_dirs(container))
    except Refused:
        return []
    return [f"process {p} of container {container} is still frozen" for p in pids if state(p) in ("T", "t")]


def leftovers(tag: str, action: str, container: str, pod_uid: str) -> list[str]:
    out = [f"process {p} of {tag} still runs" for p in tagged(tag)]
    if action in ("network-delay", "network-loss"):
        out += network(tag, pod_uid)
    if action == "instance-failure":
        out += frozen(container)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 4:
        print(json.dumps({"error": f"usage: readback.py TAG ACTION CONTAINER POD_UID (got {argv})"}))
        return 1
    try:
        print(json.dumps({"leftovers": leftovers(*argv)}))
    except (Refused, OSError) as e:
        print(json.dumps({"error": str(e) or type(e).__name__}))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
