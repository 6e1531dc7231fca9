"""A Service's address on this machine: a loopback listener that port-forwards each connection to
a ready pod behind the Service (what `kubectl port-forward svc/NAME` does), through the API server.

The validator's probes speak plain HTTP to `endpoint(service)`; on a cluster whose pod and
Service addresses this machine cannot route to, this is how they reach the app.
"""

from __future__ import annotations

import itertools
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.stream import portforward
from urllib3.exceptions import HTTPError

from faultkit.errors import UsageError
from faultkit.platforms.kubernetes import objects
from faultkit.platforms.kubernetes.connection import Connection
from faultkit.platforms.kubernetes.instances import is_ready
from faultkit.platforms.service_url import parse_service_url

QUERY_WAIT_S = 2.0  # how long a connection to a query service (to_service) waits for a pod to forward to
Picker = Callable[[], tuple[str, int] | None]  # a ready pod and its target port, now


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        opened = self._open()
        if opened is None:
            return  # nothing ready behind the Service: the client sees the connection close, as it would
        pf, remote = opened
        remote.setblocking(True)
        done = threading.Event()

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            done.set()

        threading.Thread(target=pump, args=(remote, self.request), daemon=True).start()
        pump(self.request, remote)
        done.wait(30)
        try:
            remote.close()
            pf.close()
        except Exception:  # closing a half-closed websocket raises from the library; nothing to keep
            pass

    def _open(self) -> tuple[Any, socket.socket] | None:
        """A forward to a ready pod, tried for up to the server's `wait`: on a busy node a query
        service's pod can fail a readiness probe for a moment, or the API server refuse an upgrade,
        and a query that waits two seconds is better served than one closed at once. The app's own
        forwards wait for nothing: a probe of a fault that leaves nothing ready must see it at once."""
        deadline = time.monotonic() + self.server.wait
        while True:
            target = self.server.pick()
            if target is not None:
                pod, port = target
                try:
                    # an ApiClient of its own: the stream helpers swap the client's request method while
                    # they run, which would turn every other thread's API call on a shared client into a
                    # websocket
                    api = client.CoreV1Api(client.ApiClient(self.server.conn.api.configuration))
                    pf = portforward(api.connect_get_namespaced_pod_portforward, pod, self.server.namespace,
                                     ports=str(port))
                    return pf, pf.socket(port)
                except Exception:  # the client library raises bare exceptions for a refused upgrade
                    pass
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.5)


def _container_port(pod: dict[str, Any], target: int | str) -> int:
    """A Service's targetPort in one pod: a number, or the number of the container port so named."""
    if isinstance(target, int) or str(target).isdigit():
        return int(target)
    for c in (pod.get("spec") or {}).get("containers") or []:
        for cp in c.get("ports") or []:
            if cp.get("name") == target:
                return int(cp["containerPort"])
    return 0  # named by no container: the forward is refused, as a connection to it would be


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, conn: Connection, namespace: str, pick: Picker, wait: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.conn, self.namespace, self.pick, self.wait = conn, namespace, pick, wait


class Forwards:
    """One listener per (service, port), started on first use, stopped by close()."""

    def __init__(self, conn: Connection, namespace: str) -> None:
        self.conn, self.namespace = conn, namespace
        self.servers: dict[tuple[str, int], _Server] = {}
        self.lock = threading.Lock()
        self.turn = itertools.count()

    def url(self, key: tuple[str, int], pods: Callable[[], list[tuple[str, int]]], wait: float = 0.0) -> str:
        with self.lock:
            if key not in self.servers:
                def pick() -> tuple[str, int] | None:
                    ready = pods()
                    return ready[next(self.turn) % len(ready)] if ready else None
                srv = _Server(self.conn, self.namespace, pick, wait)
                threading.Thread(target=srv.serve_forever, daemon=True).start()
                self.servers[key] = srv
            return f"http://127.0.0.1:{self.servers[key].server_address[1]}"

    def to_ready(self, service: str, port: int, pods: Callable[[], list[dict[str, Any]]]) -> str:
        """A Service's address: each connection goes to one of its ready pods now, in turn, on the
        port the Service sends `port` to now (Bank of Anthos' frontend serves port 80 from 8080, and a
        config fault may change that mapping while the forward is open)."""
        def targets() -> list[tuple[str, int]]:
            target = self._target_port(service, port)
            return [(p["metadata"]["name"], _container_port(p, target)) for p in pods() if is_ready(p)]
        return self.url((service, port), targets)

    def _target_port(self, service: str, port: int) -> int | str:
        """The Service's targetPort for `port`; `port` itself when no Service of that name serves it."""
        try:
            svc = objects.read_json(self.conn.core.read_namespaced_service, service, self.namespace)["spec"]
        except ApiException as e:
            if e.status == 404:
                return port
            raise
        spec = next((sp for sp in svc.get("ports") or [] if sp.get("port") == port), None)
        return port if spec is None else spec.get("targetPort") or port

    def to_slots(self, port: int, slots: Callable[[], dict[str, dict[str, Any]]]) -> dict[str, str]:
        """Each instance's own address: a listener per slot that forwards to the pod in that slot now
        (a replaced pod's successor once it takes the slot)."""
        def in_slot(inst: str) -> Callable[[], list[tuple[str, int]]]:
            def pod() -> list[tuple[str, int]]:
                p = slots().get(inst)
                return [(p["metadata"]["name"], port)] if p is not None else []
            return pod
        return {inst: self.url((f"instance {inst}", port), in_slot(inst)) for inst in sorted(slots())}

    def to_service(self, service: str, port: int) -> str:
        """A Service faultkit did not deploy (a telemetry stack's), by its own selector and target port:
        each connection goes to one of the pods it selects that is ready now."""
        def pods() -> list[tuple[str, int]]:
            try:
                svc = objects.read_json(self.conn.core.read_namespaced_service, service, self.namespace)["spec"]
                spec = next((sp for sp in svc.get("ports") or [] if sp.get("port") == port), None)
                if spec is None or not svc.get("selector"):
                    return []
                found = objects.items(self.conn.core.list_namespaced_pod, self.namespace,
                                      label_selector=objects.selector_string(svc["selector"]))
            except (ApiException, HTTPError, OSError, ValueError):
                return []  # no such Service, or no API server now: the client sees the connection close
            return [(p["metadata"]["name"], _container_port(p, spec.get("targetPort") or port))
                    for p in found if is_ready(p)]
        return self.url((f"service {service}", port), pods, QUERY_WAIT_S)

    def close(self) -> None:
        with self.lock:
            for srv in self.servers.values():
                srv.shutdown()
                srv.server_close()
            self.servers.clear()


class ServiceForwards:
    """Query services in the cluster faultkit did not deploy (a telemetry stack's Prometheus and
    Jaeger), named k8s://NAMESPACE/SERVICE:PORT: one set of forwards per namespace."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.by_namespace: dict[str, Forwards] = {}

    def address(self, url: str, option: str) -> str:
        """An http(s) URL as given; a Service's as a loopback URL forwarding to its ready pods."""
        try:
            service = parse_service_url(url)
        except ValueError as e:
            raise UsageError(f"{option} {e}") from None
        if service is None:
            return url
        namespace, name, port = service
        return self.by_namespace.setdefault(namespace, Forwards(self.conn, namespace)).to_service(name, port)

    def close(self) -> None:
        for forwards in self.by_namespace.values():
            forwards.close()
