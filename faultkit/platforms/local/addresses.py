"""Address translation at launch, the local platform's kube-proxy and pod network in one table.

Each process is given the manifest's env values translated so that they keep their in-cluster
meaning on one machine's loopback interface:

* `cart:7070`, `http://cart:7070/x`: a Service and one of its ports -> that port's relay;
  a known Service on a port it does not expose -> a port where nothing listens (refused);
  a host that is neither a Service nor localhost -> `<host>.invalid` (resolution fails, RFC 6761).
* a listener port (a bare number in a variable named like *PORT*, or equal to a containerPort) ->
  the instance's own port for that pod port; a pod port the manifest does not declare gets a fresh
  port of its own, so a listener/Service disagreement refuses connections as it would in a pod.
* `0.0.0.0` -> `127.0.0.1`: instances only ever listen on loopback.

The manifest values themselves are never changed; read-back returns them untouched.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from faultkit.apps import addresses

LOCAL_HOSTS = addresses.LOCAL_HOSTS


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


# Ports handed out on this machine, each held by an exclusive lock on a file named after it for as
# long as the process that took it runs (or until `release_port`): two supervisors starting side by
# side (a campaign's workers) each probe ports free and hand them to processes that bind them
# seconds later, so without it both could hand out one port, and one service would restart against
# "Address already in use" for good. A lock dies with its process, so nothing stale is left to clean.
_held: dict[int, int] = {}
_held_lock = threading.Lock()


def _reservations() -> Path:
    folder = Path(tempfile.gettempdir()) / f"faultkit-ports-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def _reserve(folder: Path, port: int) -> bool:
    fd = os.open(folder / str(port), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    with _held_lock:
        _held[port] = fd
    return True


def release_port(port: int) -> None:
    """Give a port `free_port` handed out back to the machine (its listener is gone)."""
    with _held_lock:
        fd = _held.pop(port, None)
    if fd is not None:
        os.close(fd)


def free_port() -> int:
    """A port free on 127.0.0.1 now, below the kernel's ephemeral range, and handed out to no one else.

    A port the kernel hands out for binding to port 0 comes from the ephemeral range, which the
    load's own outgoing connections also draw from: a service restarted later could find its port
    taken by a client socket ("Address already in use"). Listeners therefore live below it.
    """
    high = min(_ephemeral_low(), 65536) - 1
    low = max(1024, high - 12000)
    folder = _reservations()
    for _ in range(200):
        port = random.randint(low, high)  # noqa: S311 - spreading picks, not secrecy
        with _held_lock:
            if port in _held:
                continue
        if not _reserve(folder, port):
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                release_port(port)
                continue
            return port
    raise OSError(f"no free port between {low} and {high} on 127.0.0.1")


def service_name(host: str, namespace: str = "default") -> str:
    """`cart`, `cart.default`, `cart.default.svc[.cluster.local]` -> `cart`; any other host as it is."""
    found = addresses.cluster_name(host)
    if found is None or found[1] not in (None, namespace):
        return host
    return found[0]


def is_listener_var(name: str) -> bool:
    return "PORT" in name.upper()


# (service, port) -> loopback port: its relay, or a refusing port; None for an unknown host.
Resolver = Callable[[str, int], "int | None"]


def translate_value(
    name: str,
    value: str,
    container_ports: frozenset[int],
    pod_port: Callable[[int], int],
    resolve: Resolver,
) -> str:
    """The value the process sees for the manifest's `name=value`."""
    if value == "0.0.0.0":
        return "127.0.0.1"
    if value.isdigit() and 0 < int(value) < 65536:
        if is_listener_var(name) or int(value) in container_ports:
            return str(pod_port(int(value)))
        return value
    a = addresses.parse_with_port(value)
    if a is None or a.port is None or not a.valid_port:
        return value
    if a.is_local:
        return a.with_host_port("127.0.0.1", pod_port(a.port))
    if a.is_ip:
        return value
    target = resolve(service_name(a.host), a.port)
    if target is None:
        return a.with_host(f"{a.host}.invalid")
    return a.with_host_port("127.0.0.1", target)


def translate_env(
    env: Mapping[str, str],
    container_ports: frozenset[int],
    pod_port: Callable[[int], int],
    resolve: Resolver,
) -> dict[str, str]:
    return {k: translate_value(k, v, container_ports, pod_port, resolve) for k, v in env.items()}
