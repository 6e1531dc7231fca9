"""What the cluster changes on the host and takes back: sysctls, iptables chains, links, mounts, cgroups."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from pathlib import Path

from .layout import BRIDGE, CNI_NETWORK, SERVICE_CIDR, Layout

# Set by `up` (forwarding and bridged traffic through iptables, which Service routing needs) or by
# the kubelet itself (its kernel defaults); `up` records the values it found and `down` puts them back.
SYSCTLS = ("net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables", "vm/overcommit_memory", "vm/panic_on_oom",
           "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes")
CGROUP_ROOT = Path("/sys/fs/cgroup")
FORWARD_CHAIN = "FAULTKIT-CLUSTER-FWD"


def _sysctl(name: str) -> Path:
    return Path("/proc/sys") / name


def record_sysctls(layout: Layout) -> None:
    found = {name: _sysctl(name).read_text().strip() for name in SYSCTLS if _sysctl(name).exists()}
    (layout.state / "sysctl.json").write_text(json.dumps(found, indent=2) + "\n")
    for name in ("net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables"):
        _sysctl(name).write_text("1\n")


def restore_sysctls(layout: Layout) -> None:
    path = layout.state / "sysctl.json"
    if not path.is_file():
        return
    for name, value in json.loads(path.read_text()).items():
        try:
            if _sysctl(name).read_text().strip() != value:
                _sysctl(name).write_text(value + "\n")
        except OSError:
            pass


def allow_forwarding() -> None:
    """Accept forwarded traffic of the pod bridge, but refuse what a pod sends to a Service address on
    a port no Service serves. Docker sets the FORWARD policy to DROP, and with bridge-nf-call-iptables
    even pod-to-pod frames and Service replies pass through FORWARD. kube-proxy's iptables mode leaves
    such a connect unrewritten, so it would leave by the host's default route, and this host's network
    answered it with HTTP 404: a fault pointing a client at a wrong port showed 404s, where a cluster
    refuses the connection (kube-proxy's nftables mode rejects it so). The chain is filled afresh."""
    def ipt(*args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["iptables", "-w", *args], capture_output=True, check=check)
    if ipt("-n", "-L", FORWARD_CHAIN, check=False).returncode != 0:
        ipt("-N", FORWARD_CHAIN)
    ipt("-F", FORWARD_CHAIN)
    unserved = ("-i", BRIDGE, "-d", SERVICE_CIDR)
    ipt("-A", FORWARD_CHAIN, *unserved, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset")
    ipt("-A", FORWARD_CHAIN, *unserved, "-j", "REJECT")
    ipt("-A", FORWARD_CHAIN, "-i", BRIDGE, "-j", "ACCEPT")
    ipt("-A", FORWARD_CHAIN, "-o", BRIDGE, "-j", "ACCEPT")
    if ipt("-C", "FORWARD", "-j", FORWARD_CHAIN, check=False).returncode != 0:
        ipt("-I", "FORWARD", "1", "-j", FORWARD_CHAIN)


def sweep_iptables() -> list[str]:
    """Remove every KUBE-* chain, this cluster's CNI-* chains (masquerade rules tagged with our
    network's name) and its forward chain, and every rule that jumps to them. Docker's chains are
    never named so."""
    removed = []
    for binary in ("iptables", "ip6tables"):
        for table in ("filter", "nat", "mangle", "raw"):
            listing = subprocess.run([binary, "-w", "-t", table, "-S"], capture_output=True, text=True)
            if listing.returncode != 0:
                continue
            lines = listing.stdout.splitlines()
            rules = [shlex.split(line) for line in lines if line.startswith("-A ")]
            ours = {line.split()[1] for line in lines
                    if line.startswith("-N KUBE-") or line.startswith(f"-N {FORWARD_CHAIN}")}
            tag = f'name: "{CNI_NETWORK}"'
            for rule in rules:
                if tag in rule:
                    if rule[1].startswith("CNI-"):
                        ours.add(rule[1])
                    if "-j" in rule and rule[rule.index("-j") + 1].startswith("CNI-"):
                        ours.add(rule[rule.index("-j") + 1])
            for rule in rules:
                target = rule[rule.index("-j") + 1] if "-j" in rule else ""
                if rule[1] not in ours and (target in ours or tag in rule):
                    subprocess.run([binary, "-w", "-t", table, "-D", *rule[1:]], capture_output=True)
            for chain in sorted(ours):
                subprocess.run([binary, "-w", "-t", table, "-F", chain], capture_output=True)
            for chain in sorted(ours):
                if subprocess.run([binary, "-w", "-t", table, "-X", chain], capture_output=True).returncode == 0:
                    removed.append(f"{binary}/{table}/{chain}")
    return removed


def kube_chains() -> list[str]:
    """KUBE-* chains left in any table (the after-`down` check)."""
    left = []
    for binary in ("iptables", "ip6tables"):
        for table in ("filter", "nat", "mangle", "raw"):
            out = subprocess.run([binary, "-w", "-t", table, "-S"], capture_output=True, text=True).stdout
            left += [f"{binary}/{table}/{line.split()[1]}" for line in out.splitlines() if line.startswith("-N KUBE-")]
    return left


def mounts_under(folder: Path) -> list[str]:
    prefix = str(folder).rstrip("/") + "/"
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].encode().decode("unicode_escape")
        if point.startswith(prefix) or point == prefix.rstrip("/"):
            found.append(point)
    return found


def unmount_under(folder: Path) -> None:
    for _ in range(3):
        points = sorted(set(mounts_under(folder)), key=len, reverse=True)
        if not points:
            return
        for point in points:
            if subprocess.run(["umount", point], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", point], capture_output=True)


def remove_links() -> None:
    out = subprocess.run(["ip", "-o", "link", "show", "master", BRIDGE], capture_output=True, text=True).stdout
    for line in out.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        subprocess.run(["ip", "link", "delete", name], capture_output=True)
    subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)


def link_exists() -> bool:
    return subprocess.run(["ip", "link", "show", BRIDGE], capture_output=True).returncode == 0


def pod_cgroups() -> list[Path]:
    """The kubelet's cgroup trees (cgroupfs driver: /kubepods in each v1 hierarchy, or in the v2 root)."""
    return [path for path in CGROUP_ROOT.glob("*/kubepods") if path.is_dir()] + (
        [CGROUP_ROOT / "kubepods"] if (CGROUP_ROOT / "kubepods").is_dir() else [])


def remove_cgroups() -> None:
    for _ in range(5):
        trees = pod_cgroups()
        if not trees:
            return
        for tree in trees:
            for folder in sorted((p for p in [tree, *tree.rglob("*")] if p.is_dir()), key=lambda p: len(p.parts),
                                 reverse=True):
                procs = folder / "cgroup.procs"
                if procs.exists():
                    for pid in procs.read_text().split():
                        try:
                            os.kill(int(pid), signal.SIGKILL)
                        except OSError:
                            pass
                try:
                    folder.rmdir()
                except OSError:
                    pass


def remove_host_files(layout: Layout) -> None:
    """The kubelet's /var/log/containers links into our state, and the CNI result cache of our network."""
    containers = Path("/var/log/containers")
    if containers.is_dir():
        for link in containers.iterdir():
            if link.is_symlink() and os.readlink(link).startswith(str(layout.state)):
                link.unlink()
    results = Path("/var/lib/cni/results")
    if results.is_dir():
        for result in results.glob(f"{CNI_NETWORK}-*"):
            result.unlink()
