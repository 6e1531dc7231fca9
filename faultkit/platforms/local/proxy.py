"""The proxy (kube-proxy): a relay per Service port and hostPort, and the address table.

Every (Service, port) the manifests expose gets a loopback relay (relay.py) forwarding to the
ready replicas its selector picks; `resolve` is the table containers' addresses are translated
with (addresses.py). A port the Service does not expose resolves to a port that refuses.
"""

from __future__ import annotations

import socket
import threading

from faultkit.errors import PlatformError
from faultkit.platforms.local.addresses import free_port
from faultkit.platforms.local.deployed import Container, Deployed
from faultkit.platforms.local.relay import Endpoints, Relay
from faultkit.platforms.local.replicas import ReplicaTable


class Proxy:
    def __init__(self, deployed: Deployed, table: ReplicaTable) -> None:
        self.deployed, self.table = deployed, table
        self.relays: dict[tuple[str, int], Relay] = {}  # (Service or "<workload>/hostPort", port) -> relay
        self.lock = threading.RLock()
        self._dead = socket.socket()  # bound, never listening: connecting to it is refused
        self._dead.bind(("127.0.0.1", 0))
        self.dead_port: int = self._dead.getsockname()[1]

    def resolve(self, service: str, port: int) -> int | None:
        """Loopback port for `service:port`: its relay, a refusing port, or None (no such host)."""
        if service not in self.deployed.services():
            return None
        relay = self.relays.get((service, port))
        return (
            relay.listen_port
            if relay is not None and relay.port in self._service_port_numbers(service)
            else self.dead_port
        )

    def _service_port_numbers(self, service: str) -> set[int]:
        return {int(p["port"]) for p in self.deployed.service_ports(service)}

    def sync(self, service: str) -> None:
        """One enabled relay per port the Service exposes now; a removed port's relay refuses."""
        numbers = self._service_port_numbers(service)
        with self.lock:
            for n in numbers:
                if (service, n) not in self.relays:
                    self.relays[(service, n)] = Relay(service, n, free_port(), self._endpoints(service, n))
                self.relays[(service, n)].enable()
            for (svc, n), relay in self.relays.items():
                if svc == service and n not in numbers:
                    relay.disable()

    def _endpoints(self, service: str, number: int) -> Endpoints:
        def ready_ports() -> list[int]:
            dep = self.deployed
            entry = next((p for p in dep.service_ports(service) if int(p["port"]) == number), None)
            if entry is None:
                return []
            target = entry.get("targetPort", number)
            return [
                r.pod_port(r.port_number(target)) for w in dep.selected_workloads(service) for r in self.table.ready(w)
            ]

        return ready_ports

    def bind_host_ports(self, workloads: list[str]) -> None:
        """A relay on each declared hostPort, as a pod's hostPort takes the node's port."""
        for w in workloads:
            for c in self.deployed.containers(w):
                self._bind_host_ports(w, c)

    def _bind_host_ports(self, workload: str, container: Container) -> None:
        for host_port, container_port in container.host_ports:
            try:
                relay = Relay(
                    f"{workload}/hostPort", container_port, host_port, self._host_endpoints(workload, container_port)
                )
            except OSError:
                raise PlatformError(
                    f"port {host_port} (hostPort of {workload}/{container.name}) is already in use on "
                    "this machine; stop what uses it or remove the hostPort"
                ) from None
            relay.enable()
            self.relays[(f"{workload}/hostPort", host_port)] = relay

    def _host_endpoints(self, workload: str, number: int) -> Endpoints:
        return lambda: [r.pod_port(number) for r in self.table.ready(workload)]

    def endpoint(self, workload: str, service: str, port: int | None = None) -> str:
        """The address of a Service selecting `workload` (the one named `service` first)."""
        names = [s for s in self.deployed.services() if workload in self.deployed.selected_workloads(s)]
        names.sort(key=lambda s: s != service)
        for svc in names:
            for p in self.deployed.service_ports(svc):
                relay = self.relays.get((svc, int(p["port"])))
                if relay is not None and (port is None or relay.port == port):
                    return f"http://127.0.0.1:{relay.listen_port}"
        raise PlatformError(
            f"service {service!r} exposes no Service port{'' if port is None else f' {port}'} on the local platform"
        )

    def relays_of(self, workload: str) -> list[Relay]:
        """The relays of every Service selecting the workload (where network actions act)."""
        return [
            r
            for (svc, _), r in self.relays.items()
            if svc in self.deployed.services() and workload in self.deployed.selected_workloads(svc)
        ]

    def close(self) -> None:
        for relay in self.relays.values():
            relay.close()
        self._dead.close()
