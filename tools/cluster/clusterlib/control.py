"""The `cluster` subcommands: up, down, status, env, load, build."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests
from kubernetes import client, config

from . import build, configs, dns, host, images, pki, procs
from .layout import APISERVER_PORT, COMPONENTS, ETCD_CLIENT_PORT, NODE_NAME, Layout, node_ip


class ClusterError(Exception):
    """A failure `cluster` reports as one line and a non-zero exit."""


@dataclass(frozen=True)
class UpTimes:
    build: float
    built: bool
    ready: float  # from the start of the first component to node Ready
    dns: float  # ... to CoreDNS available


def api_client(layout: Layout) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(layout.admin_kubeconfig))


def node_ready(api: client.ApiClient) -> bool:
    node = client.CoreV1Api(api).read_node(NODE_NAME)
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def _apiserver_ready(layout: Layout, ip: str) -> bool:
    pki_dir = layout.pki
    resp = requests.get(f"https://{ip}:{APISERVER_PORT}/readyz", timeout=3, verify=str(pki_dir / "ca.crt"),
                        cert=(str(pki_dir / "admin.crt"), str(pki_dir / "admin.key")))
    return resp.status_code == 200


def _etcd_ready() -> bool:
    return requests.get(f"http://127.0.0.1:{ETCD_CLIENT_PORT}/health", timeout=3).json().get("health") == "true"


def _containerd_ready(layout: Layout) -> bool:
    return subprocess.run(images.ctr(layout, "version"), capture_output=True).returncode == 0


def _start(layout: Layout, name: str, ip: str) -> None:
    procs.start(layout, name, configs.command(name, layout, ip))


def _wait(layout: Layout, name: str, check: Callable[[], bool], timeout: float) -> None:
    """Wait for a component's probe; a component that exits meanwhile fails at once with its log's tail."""
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        if procs.process(layout, name) is None:
            raise ClusterError(f"{name} exited during start-up; its log ends: {log_tail(layout, name)}")
        try:
            if check():
                return
        except Exception as exc:  # noqa: BLE001 - a failing probe means "not yet"
            last = f" (last probe error: {type(exc).__name__}: {exc})"[:300]
        if time.monotonic() > deadline:
            raise ClusterError(f"{name} not ready after {timeout:.0f} s{last}; its log ends: {log_tail(layout, name)}")
        time.sleep(0.5)


def log_tail(layout: Layout, name: str, lines: int = 3) -> str:
    path = layout.logs / f"{name}.log"
    if not path.is_file():
        return "(no log)"
    return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])


def running(layout: Layout) -> dict[str, bool]:
    return {name: procs.process(layout, name) is not None for name in COMPONENTS}


def up(layout: Layout) -> UpTimes | None:
    """Build if needed and start every component; None when the cluster was already up."""
    state = running(layout)
    if all(state.values()):
        return None
    if any(state.values()):
        dead = [name for name, alive in state.items() if not alive]
        raise ClusterError(f"cluster is partly up ({', '.join(dead)} not running); run `cluster down` first")
    if any(procs.recorded(layout, name) for name in COMPONENTS):
        # Every component gone but the records left (the machine or the session was stopped under
        # it): take back its chains, mounts and cgroups, keep its state, and start afresh.
        down(layout, keep=True)
    result = build.ensure_built(layout)
    layout.state.mkdir(parents=True, exist_ok=True)
    ip = node_ip()
    if not (layout.pki / "ca.crt").is_file():
        pki.make_pki(layout.pki, ip)
    configs.write_all(layout, ip)
    host.record_sysctls(layout)
    host.allow_forwarding()
    began = time.monotonic()
    _start(layout, "etcd", ip)
    _wait(layout, "etcd", _etcd_ready, 60)
    _start(layout, "kube-apiserver", ip)
    _wait(layout, "kube-apiserver", lambda: _apiserver_ready(layout, ip), 120)
    _start(layout, "kube-controller-manager", ip)
    _start(layout, "kube-scheduler", ip)
    _start(layout, "containerd", ip)
    _wait(layout, "containerd", lambda: _containerd_ready(layout), 60)
    images.import_system_images(layout)
    _start(layout, "kubelet", ip)
    _start(layout, "kube-proxy", ip)
    api = api_client(layout)
    _wait(layout, "kubelet", lambda: node_ready(api), 120)
    ready = time.monotonic() - began
    dns.apply(api)
    _wait(layout, "kube-proxy", lambda: dns.available(api), 120)
    return UpTimes(result.seconds, result.built, ready, time.monotonic() - began)


def down(layout: Layout, keep: bool) -> list[str]:
    """Stop everything and take back what `up` changed on the host; returns what could not be removed."""
    for name in ("kube-proxy", "kubelet"):
        procs.stop(layout, name)
    if procs.process(layout, "containerd") is not None and (layout.bin / "cri-reset").is_file():
        # containerd tears every pod down itself: containers, CNI DEL (veth, IP, masquerade), mounts.
        subprocess.run([str(layout.bin / "cri-reset"), "--socket", str(layout.containerd_socket)],
                       capture_output=True, timeout=120)
    procs.stop(layout, "containerd")
    procs.terminate(procs.strays(layout), 10)  # shims left after a crash of containerd
    for name in ("kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"):
        procs.stop(layout, name)
    if (layout.bin / "kube-proxy").is_file():
        subprocess.run([str(layout.bin / "kube-proxy"), "--cleanup"], capture_output=True, timeout=60)
    host.remove_cgroups()
    host.sweep_iptables()
    host.unmount_under(layout.state)
    host.remove_links()
    host.remove_host_files(layout)
    host.restore_sysctls(layout)
    if not keep and layout.state.exists():
        shutil.rmtree(layout.state, ignore_errors=True)
    return leftovers(layout)


def leftovers(layout: Layout) -> list[str]:
    left = [f"process {p.pid} ({p.name()})" for p in procs.strays(layout)]
    left += [f"chain {chain}" for chain in host.kube_chains()]
    left += [f"mount {point}" for point in host.mounts_under(layout.state)]
    left += [f"cgroup {path}" for path in host.pod_cgroups()]
    if host.link_exists():
        left.append("link fkc0")
    return left


def status(layout: Layout) -> tuple[list[str], bool]:
    """Lines to print and whether the cluster is fully up and healthy."""
    if not any(procs.recorded(layout, name) for name in COMPONENTS):
        return ["cluster: down"], False
    lines, healthy = [], True
    for name in COMPONENTS:
        proc = procs.process(layout, name)
        if proc is None:
            healthy = False
            lines.append(f"{name:24} NOT RUNNING  (log ends: {log_tail(layout, name, 2)})")
        else:
            lines.append(f"{name:24} running pid {proc.pid}")
    try:
        ready = node_ready(api_client(layout))
        lines.append(f"node {NODE_NAME}: {'Ready' if ready else 'NOT Ready'}")
        healthy = healthy and ready
    except Exception as exc:  # noqa: BLE001 - any API failure is a status line, not a traceback
        healthy = False
        lines.append(f"API server: unreachable ({type(exc).__name__})")
    lines.append(f"cluster: {'up' if healthy else 'DEGRADED'}")
    return lines, healthy
