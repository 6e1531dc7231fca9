"""The node agent's commands: what faultkit runs, through the API server's exec, in the agent pod.

This file runs inside the agent image (Python's standard library only: it never imports faultkit).
The agent pod is privileged with the host's PID namespace and the host's cgroup tree mounted at
/host/cgroup, so it finds a container by its id (the pod status's containerID), enters that
container's namespaces and cgroups, and leaves through `stop` what it did there. Every process it
starts carries NODE_TASK=<tag> in its environment and every iptables chain it adds is named after
the tag, so `stop TAG` finds all of it again, whatever happened to the caller in between.

Each command prints one JSON object; a failure prints {"error": "..."} and exits 1.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

CGROUP = Path(os.environ.get("NODE_CGROUP_ROOT", "/host/cgroup"))
HERE = Path(__file__).resolve().parent
TAG = "NODE_TASK"
CLONE_NEWNET, CLONE_NEWPID = 0x40000000, 0x20000000
# A shell loop: a worker holds well under 1 MiB, so the workers count against the target's CPU, not its memory.
CPU_LOOP = ["sh", "-c", "while :; do :; done"]
# Fill a memfd (charged to the cgroup of the writer, which is the target's) in 16 MiB steps, then
# become `sleep`: the memory stays held by the open descriptor while the holder's own resident set
# is tiny. The OOM killer ranks a cgroup's processes by resident memory at about the same
# oom_score_adj, so past the limit it takes the container's own process, and the holder dies with
# the container's PID namespace. The holder first lowers its own oom_score_adj where the node grants
# CAP_SYS_RESOURCE: reclaim can leave the writing holder (a Python) the larger, and in one CI run the
# container was not OOM-killed in 90 s (likely: the killer took the holder, freeing the memory).
MEMORY_HOLD = (
    "import os, sys, time\n"
    "try:\n    open('/proc/self/oom_score_adj', 'w').write('-999')\nexcept OSError:\n    pass\n"
    "mb = int(sys.argv[1]); fd = os.memfd_create('buffer', 0); chunk = b'\\x01' * 1048576\n"
    "for i in range(mb):\n"
    "    os.write(fd, chunk)\n"
    "    if i % 16 == 15:\n"
    "        time.sleep(0.02)\n"
    "os.execvp('sleep', ['sleep', 'infinity'])\n"
)


class Refused(Exception):
    """What the node cannot do, in one line."""


# -- finding a container --------------------------------------------------------------------------
def hierarchies() -> list[Path]:
    """The cgroup hierarchies' roots: one on cgroup v2, one per mounted controller on v1."""
    if (CGROUP / "cgroup.controllers").exists():
        return [CGROUP]
    if not CGROUP.is_dir():
        raise Refused(f"{CGROUP}: the host's cgroup tree is not mounted in the agent")
    return sorted(d for d in CGROUP.iterdir() if d.is_dir() and not d.is_symlink() and (d / "cgroup.procs").exists())


def _find(root: Path, name_part: str, depth: int = 6) -> Path | None:
    stack = [(root, 0)]
    while stack:
        d, level = stack.pop()
        if name_part in d.name and d != root:
            return d
        if level < depth:
            try:
                stack += [(c, level + 1) for c in d.iterdir() if c.is_dir() and not c.is_symlink()]
            except OSError:
                continue
    return None


def cgroup_dirs(part: str) -> list[Path]:
    """Every hierarchy's directory for the cgroup whose name contains `part` (a container id, or a
    pod uid in the cgroupfs `pod<uid>` or systemd `...pod<uid_with_underscores>.slice` form)."""
    roots = hierarchies()
    ref = next((r for r in roots if r.name in ("pids", "memory")), roots[0])
    found = _find(ref, part) or _find(ref, part.replace("-", "_"))
    if found is None:
        raise Refused(f"no cgroup on this node is named after {part}; is the pod running on this node?")
    rel = found.relative_to(ref)
    return [r / rel for r in roots if (r / rel).is_dir()]


def procs(dirs: list[Path]) -> list[int]:
    out: set[int] = set()
    for d in dirs[:1]:
        for sub in [d, *[p for p in d.rglob("*") if p.is_dir()]]:
            try:
                out |= {int(x) for x in (sub / "cgroup.procs").read_text().split()}
            except (OSError, ValueError):
                continue
    return sorted(out)


def ppid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat.rsplit(")", 1)[1].split()[1])


def main_pid(dirs: list[Path]) -> int:
    """The container's first process: the one whose parent is outside the container (its shim)."""
    pids = procs(dirs)
    tops = [p for p in pids if ppid(p) not in pids]
    if not tops:
        raise Refused("the container has no running process")
    return min(tops)


# -- processes it starts ----------------------------------------------------------------------------
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def setns(path: str, kind: int) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc().setns(fd, kind) != 0:
            raise Refused(f"setns {path}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def _quiet() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def tagged(tag: str) -> list[int]:
    """Host pids of the processes started under `tag` ("*": under any tag)."""
    want = f"{TAG}={tag}".encode()
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if (tag == "*" and any(e.startswith(TAG.encode() + b"=") for e in env)) or want in env:
            out.append(int(entry.name))
    return sorted(out)


def spawn(tag: str, argv: list[str], pid_ns: str | None = None, net_ns: str | None = None,
          cgroups: list[Path] | None = None) -> int:
    """Start argv detached from this exec, under a keeper that waits for it (so nothing is left a
    zombie in the target's PID namespace); returns argv's host pid once it runs where it should."""
    r, w = os.pipe()
    if os.fork() == 0:  # the keeper
        try:
            os.close(r)
            os.setsid()
            _quiet()
            os.environ[TAG] = tag
            if net_ns:
                setns(net_ns, CLONE_NEWNET)
            if pid_ns:
                setns(pid_ns, CLONE_NEWPID)  # applies to the keeper's children
            # the child's end of `joined` is close-on-exec: it reads as EOF only once the child has
            # joined the target's cgroups and exec'd, so the pid is reported when it runs there
            joined, joined_w = os.pipe()
            child = os.fork()
            if child == 0:
                os.close(joined)
                try:
                    for d in cgroups or []:
                        (d / "cgroup.procs").write_text("0")
                    os.execvp(argv[0], argv)
                except OSError:
                    os.write(joined_w, b"x")
                os._exit(127)
            os.close(joined_w)
            if not os.read(joined, 1):
                os.write(w, f"{child}\n".encode())
            os.close(w)
            signal.signal(signal.SIGTERM, lambda *_: _signal(child, signal.SIGTERM))
            try:
                os.waitpid(child, 0)  # retried by Python itself when the SIGTERM handler runs (PEP 475)
            except ChildProcessError:
                pass
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as fh:
        line = fh.readline().strip()
    if not line.isdigit():
        raise Refused(f"could not start {argv[0]} in the target")
    return int(line)


def end(pids: list[int], grace: float = 3.0) -> None:
    for p in pids:
        _signal(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    for p in pids:
        _signal(p, signal.SIGKILL)
    while any(_alive(p) for p in pids) and time.monotonic() < deadline + grace:
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


# -- network ----------------------------------------------------------------------------------------
def chain_of(tag: str) -> str:
    return f"NODE-{tag}"[:28]


def _ipt(netns: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["nsenter", f"--net={netns}", "iptables", "-w", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        last = ((done.stderr or done.stdout).strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise Refused(f"iptables {' '.join(args)}: {last}")
    return done


def gateway(pid: int) -> str | None:
    """The pod's default gateway: where the node's own traffic (kubelet probes, the API server's
    proxy) comes from on a bridge network."""
    try:
        lines = Path(f"/proc/{pid}/net/route").read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        f = line.split()
        if len(f) > 2 and f[1] == "00000000":
            return socket.inet_ntoa(struct.pack("<I", int(f[2], 16)))
    return None


def net_start(tag: str, pod_uid: str, action: str, ports: list[int], exempt: list[str],
              value: int) -> dict[str, object]:
    pid = main_pid(cgroup_dirs(pod_uid))
    netns = f"/proc/{pid}/ns/net"
    chain = chain_of(tag)
    sources = sorted({s for s in [*exempt, gateway(pid) or ""] if s})
    match = ["-p", "tcp", "-m", "multiport", "--dports", ",".join(str(p) for p in ports)]
    holder = None
    _ipt(netns, "-N", chain)
    try:
        for s in sources:
            _ipt(netns, "-A", chain, "-s", s, "-j", "RETURN")
        if action == "network-loss":
            _ipt(netns, "-A", chain, *match, "-m", "statistic", "--mode", "random",
                 "--probability", f"{value / 100:.4f}", "-j", "DROP")
        else:
            queue = int(tag[:4], 16) % 60000 + 1000
            holder = spawn(tag, [sys.executable, str(HERE / "holdq.py"), str(queue), str(value)], net_ns=netns)
            _wait_bound(holder)
            _ipt(netns, "-A", chain, *match, "-j", "NFQUEUE", "--queue-num", str(queue), "--queue-bypass")
        _ipt(netns, "-I", "INPUT", "1", "-j", chain)
    except BaseException:
        net_clear(netns, chain)
        end(tagged(tag))
        raise
    return {"pid": pid, "chain": chain, "exempt": sources, "holder": holder}


def _wait_bound(pid: int, timeout: float = 10.0) -> None:
    """holdq.py marks itself bound by changing its name; until then no rule may send packets to it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            raise Refused("the packet holder exited at start: this kernel may lack NFQUEUE (nfnetlink_queue)")
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "holdq-bound":
                return
        except OSError:
            continue
        time.sleep(0.05)
    raise Refused("the packet holder did not bind its queue within 10 s")


def net_clear(netns: str, chain: str) -> None:
    while _ipt(netns, "-D", "INPUT", "-j", chain, check=False).returncode == 0:
        pass
    if _ipt(netns, "-L", chain, "-n", check=False).returncode == 0:
        _ipt(netns, "-F", chain)
        _ipt(netns, "-X", chain)
    _drop_empty_table(netns)


def _drop_empty_table(netns: str) -> None:
    """iptables-nft creates the filter table on first use; a table left with nothing but ACCEPT
    policies in it is removed, so the pod's netns is as it was (pods start with no table at all)."""
    saved = subprocess.run(["nsenter", f"--net={netns}", "iptables-save", "-t", "filter"], capture_output=True,
                           text=True).stdout.splitlines()
    body = [ln for ln in saved if ln and not ln.startswith(("#", "*", "COMMIT"))]
    if body and all(ln.startswith(":") and " ACCEPT " in ln and ln.split()[0] in (":INPUT", ":FORWARD", ":OUTPUT")
                    for ln in body):
        subprocess.run(["nsenter", f"--net={netns}", "nft", "delete", "table", "ip", "filter"], capture_output=True)


# -- commands ---------------------------------------------------------------------------------------
def start(tag: str, action: str, container: str, pod_uid: str, params: dict[str, object]) -> dict[str, object]:
    if action in ("network-delay", "network-loss"):
        ports = [int(str(p)) for p in _items(params.get("ports"))]
        exempt = [str(s) for s in _items(params.get("exempt"))]
        return net_start(tag, pod_uid, action, ports, exempt, int(str(params["value"])))
    dirs = cgroup_dirs(container)
    pid = main_pid(dirs)
    if action == "instance-kill":
        os.kill(pid, signal.SIGKILL)
        return {"pid": pid}
    if action == "instance-failure":
        stopped = procs(dirs)
        for p in stopped:
            _signal(p, signal.SIGSTOP)
        return {"pid": pid, "stopped": stopped}
    pid_ns = f"/proc/{pid}/ns/pid"
    if action == "cpu-stress":
        workers = [spawn(tag, CPU_LOOP, pid_ns=pid_ns, cgroups=dirs) for _ in range(int(str(params["workers"])))]
        return {"pid": pid, "workers": workers}
    if action == "memory-stress":
        held = spawn(tag, [sys.executable, "-c", MEMORY_HOLD, str(params["mb"])], pid_ns=pid_ns, cgroups=dirs)
        return {"pid": pid, "workers": [held]}
    raise Refused(f"the node agent does not carry out {action!r}")


def _items(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


def stop(tag: str, action: str, container: str, pod_uid: str) -> dict[str, object]:
    left: dict[str, object] = {}
    if action in ("network-delay", "network-loss", "*"):
        try:
            pid = main_pid(cgroup_dirs(pod_uid))
            net_clear(f"/proc/{pid}/ns/net", chain_of(tag))
        except Refused as e:
            left["network"] = str(e)  # the pod is gone, and its netns with it
    end(tagged(tag))
    if action in ("instance-failure", "*"):
        try:
            for p in procs(cgroup_dirs(container)):
                _signal(p, signal.SIGCONT)
        except Refused as e:
            left["container"] = str(e)
    return {"stopped": tag, "left": left, "running": tagged(tag)}


def serve() -> None:
    """Wait, as the DaemonSet's main process, until the kubelet asks it to stop. As PID 1 it gets no
    default signal action, so it waits for SIGTERM (or SIGINT) itself and then returns."""
    stopping = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stopping)
    signal.sigwait(stopping)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv[:1] == ["serve"]:
            serve()
            return 0
        if argv[:1] == ["start"] and len(argv) == 6:
            out = start(argv[1], argv[2], argv[3], argv[4], json.loads(argv[5]))
        elif argv[:1] == ["stop"] and len(argv) == 5:
            out = stop(argv[1], argv[2], argv[3], argv[4])
        else:
            raise Refused(f"usage: nodeagent.py serve | start TAG ACTION CONTAINER POD_UID PARAMS | stop TAG ACTION "
                          f"CONTAINER POD_UID (got {argv})")
    except (Refused, OSError, ValueError, KeyError) as e:
        print(json.dumps({"error": str(e) or type(e).__name__}))
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
