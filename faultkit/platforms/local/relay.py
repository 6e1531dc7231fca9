"""In-process TCP relays: one loopback listener per (Service, port), like kube-proxy.

A relay forwards each accepted connection to one ready endpoint (round-robin), chosen when the
connection arrives. With no ready endpoint, or when the endpoint refuses, the client's connection
is reset. A disabled relay keeps its port bound but not listening, so connects are refused (the
Service no longer exposes that port). Delay and loss are the network faults of direct actions.
"""

from __future__ import annotations

import logging
import random
import socket
import struct
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

# Returns the loopback ports of the ready endpoints for this relay right now.
Endpoints = Callable[[], list[int]]


def _reset(sock: socket.socket) -> None:
    """Close with RST (SO_LINGER 0), so the peer sees a reset rather than a clean end."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


class Relay:
    def __init__(self, service: str, port: int, listen_port: int, endpoints: Endpoints) -> None:
        self.service = service
        self.port = port  # the Service port it stands for
        self.listen_port = listen_port
        self.endpoints = endpoints
        self.delay_s = 0.0
        self.loss = 0.0  # share of new connections dropped
        self._rr = 0
        self._enabled = False
        self._closed = False
        self._lock = threading.Lock()
        self._sock = self._bound()

    def _bound(self) -> socket.socket:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.listen_port))
        return s

    def enable(self) -> None:
        with self._lock:
            if self._enabled or self._closed:
                return
            self._sock.listen(256)
            self._enabled = True
            threading.Thread(
                target=self._accept_loop,
                args=(self._sock,),
                daemon=True,
                name=f"relay-{self.service}-{self.port}",
            ).start()

    def disable(self) -> None:
        """Stop listening but keep the port bound: connecting is refused."""
        with self._lock:
            if not self._enabled:
                return
            self._enabled = False
            _shutdown(self._sock)
            self._sock = self._bound()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._enabled = False
            if self._sock is not None:
                _shutdown(self._sock)

    def _accept_loop(self, lsock: socket.socket) -> None:
        while True:
            try:
                client, _ = lsock.accept()
            except OSError:
                return
            if self.loss and random.random() < self.loss:
                _reset(client)
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _pick(self) -> int | None:
        ports = self.endpoints()
        if not ports:
            return None
        with self._lock:
            self._rr += 1
            return ports[self._rr % len(ports)]

    def _serve(self, client: socket.socket) -> None:
        target = self._pick()
        if target is None:
            _reset(client)
            return
        try:
            upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            upstream.settimeout(5)
            upstream.connect(("127.0.0.1", target))  # no getaddrinfo: it is a literal address
            upstream.settimeout(None)
        except OSError:
            upstream.close()
            _reset(client)
            return
        forward = threading.Thread(target=self._pump, args=(client, upstream, 0.0), daemon=True)
        forward.start()
        self._pump(upstream, client, None)
        forward.join(timeout=60)
        client.close()
        upstream.close()

    def _pump(self, src: socket.socket, dst: socket.socket, delay: float | None) -> None:
        """Copy src -> dst; the service->client direction (delay None) takes the current delay."""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    dst.shutdown(socket.SHUT_WR)  # pass the half-close on
                    return
                d = self.delay_s if delay is None else delay
                if d:
                    time.sleep(d)
                dst.sendall(data)
        except OSError:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
