"""Pinned versions, addresses and the folders every other module of the tool agrees on."""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

TOOL_DIR = Path(__file__).resolve().parent.parent
GO_DIR = TOOL_DIR / "go"

# v1.34 is the newest minor whose kubelet still runs on cgroup v1 without an opt-out (1.35+ refuse
# it unless failCgroupV1 is false); etcd 3.6 is the line 1.34 is tested with; containerd 2.2 is
# the oldest v2 line the module proxy serves and implements the CRI 1.34 needs.
VERSIONS = {
    "kubernetes": "v1.34.4",
    "etcd": "v3.6.16",
    "containerd": "v2.2.9",
    "coredns": "v1.14.7",
}

NODE_NAME = "node-1"  # neutral: pods and events of the app under test name their node
# Ranges away from Docker's 172.17.0.0/16 and from the usual home/office 192.168.x networks.
CLUSTER_POD_CIDR = "10.244.0.0/16"
NODE_POD_CIDR = "10.244.0.0/24"
SERVICE_CIDR = "10.96.0.0/16"
KUBERNETES_SERVICE_IP = "10.96.0.1"
DNS_SERVICE_IP = "10.96.0.10"
CLUSTER_DOMAIN = "cluster.local"
BRIDGE = "fkc0"
CNI_NETWORK = "faultkit-cluster"
ETCD_CLIENT_PORT = 12379
ETCD_PEER_PORT = 12380
APISERVER_PORT = 6443
PAUSE_IMAGE = "faultkit.local/pause:1"
COREDNS_IMAGE = f"faultkit.local/coredns:{VERSIONS['coredns']}"

# Start order; `down` stops them in reverse.
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "containerd",
              "kubelet", "kube-proxy")


@dataclass(frozen=True)
class Layout:
    cache: Path  # outside the repository: Go caches and the built binaries
    state: Path  # everything a running cluster writes; removed by `down` unless --keep

    @property
    def gomodcache(self) -> Path:
        return self.cache / "gomod"

    @property
    def gocache(self) -> Path:
        return self.cache / "gocache"

    @property
    def bin(self) -> Path:
        return self.cache / cache_key() / "bin"

    @property
    def pki(self) -> Path:
        return self.state / "pki"

    @property
    def logs(self) -> Path:
        return self.state / "logs"

    @property
    def run(self) -> Path:
        return self.state / "run"

    @property
    def containerd_socket(self) -> Path:
        return self.state / "containerd" / "containerd.sock"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.state / "admin.kubeconfig"


def layout_from_env(environ: dict[str, str] | None = None) -> Layout:
    env = os.environ if environ is None else environ
    cache_home = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = Path(env.get("FAULTKIT_CLUSTER_CACHE") or cache_home / "faultkit-cluster")
    state_home = Path(env.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    state = Path(env.get("FAULTKIT_CLUSTER_STATE") or state_home / "faultkit-cluster")
    return Layout(cache=cache, state=state)


@functools.lru_cache(maxsize=1)
def go_version() -> str:
    return subprocess.run(["go", "env", "GOVERSION"], check=True, capture_output=True, text=True).stdout.strip()


@functools.lru_cache(maxsize=1)
def cache_key() -> str:
    """Pinned versions plus a digest of the Go sources and the toolchain: a change of any rebuilds."""
    digest = hashlib.sha256(go_version().encode())
    for path in sorted(GO_DIR.rglob("*")):
        if path.is_file() and path.suffix in {".go", ".mod", ".sum"}:
            digest.update(str(path.relative_to(GO_DIR)).encode())
            digest.update(path.read_bytes())
    short = {"kubernetes": "k8s", "etcd": "etcd", "containerd": "ctrd", "coredns": "coredns"}
    parts = [f"{short[name]}{version.lstrip('v')}" for name, version in VERSIONS.items()]
    return "-".join(parts) + "-" + digest.hexdigest()[:10]


def node_ip() -> str:
    """The node's own address on the default route: pods reach the API server there (not on 127.0.0.1)."""
    out = subprocess.run(["ip", "-4", "-o", "route", "get", "192.0.2.250"], capture_output=True, text=True).stdout
    words = out.split()
    if "src" in words:
        return words[words.index("src") + 1]
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        return line.split()[3].split("/")[0]
    raise RuntimeError("no global IPv4 address on this machine; the API server needs one that pods can reach")
