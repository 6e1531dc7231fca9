"""Network addresses as configuration writes them, one grammar for lint, import and every platform.

Recognised forms: `host`, `host:port`, `[::1]:80` (IPv6 in brackets), `user:pw@host:port`, and URLs
`scheme://[user[:pw]@]host[:port][/path][?query][#frag]`, including JDBC's two-part scheme
(`jdbc:postgresql://db:5432/orders`). An `Address` keeps the spans of its host and port in the
original text, so a change rewrites exactly those characters and leaves the rest byte for byte.

Cluster DNS names (`cart`, `cart.shop`, `cart.shop.svc`, `cart.shop.svc.cluster.local`) map to a
Service name and namespace with `cluster_name`.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

_ADDRESS = re.compile(
    r"^(?:(?P<scheme>(?:jdbc:)?[A-Za-z][A-Za-z0-9+.-]*)://)?"
    r"(?:(?P<userinfo>[^@/\s?#\[\]]*)@)?"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)"
    r"(?::(?P<port>\d{1,5}))?"
    r"(?P<rest>[/?#].*)?$"
)
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "::1", "::"})
_CLUSTER_SUFFIXES = (".svc.cluster.local", ".svc")


@dataclass(frozen=True)
class Address:
    text: str
    scheme: str  # "" when none; "jdbc:postgresql" for JDBC
    userinfo: str  # "" when none; "user:pw"
    host: str  # without IPv6 brackets
    port: int | None
    rest: str  # path, query and fragment, "" when none
    host_span: tuple[int, int]  # in text, brackets included
    port_span: tuple[int, int] | None

    @property
    def explicit(self) -> bool:
        """Written as an address (a scheme or a port), not a bare word that may be a host."""
        return bool(self.scheme) or self.port is not None

    @property
    def is_ip(self) -> bool:
        return is_ip(self.host)

    @property
    def is_local(self) -> bool:
        return is_local(self.host)

    @property
    def valid_port(self) -> bool:
        return self.port is not None and 0 < self.port < 65536

    def with_host(self, host: str) -> str:
        shown = f"[{host}]" if ":" in host else host
        a, b = self.host_span
        return self.text[:a] + shown + self.text[b:]

    def with_host_port(self, host: str, port: int) -> str:
        """The text with host and port replaced (a port is added when there was none)."""
        shown = f"[{host}]" if ":" in host else host
        a, b = self.host_span[0], (self.port_span or self.host_span)[1]
        return f"{self.text[:a]}{shown}:{port}{self.text[b:]}"

    def with_port(self, port: int) -> str:
        if self.port_span is None:
            a = self.host_span[1]
            return f"{self.text[:a]}:{port}{self.text[a:]}"
        a, b = self.port_span
        return self.text[:a] + str(port) + self.text[b:]


def is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def is_local(host: str) -> bool:
    """The machine itself: localhost, a loopback or wildcard address."""
    return host.lower() in LOCAL_HOSTS


def parse(text: str) -> Address | None:
    """The address `text` is, or None. A bare word parses too (see `Address.explicit`)."""
    m = _ADDRESS.match(text)
    if not m:
        return None
    host = m["host"]
    port = m["port"]
    return Address(
        text=text,
        scheme=m["scheme"] or "",
        userinfo=m["userinfo"] or "",
        host=host[1:-1] if host.startswith("[") else host,
        port=int(port) if port is not None else None,
        rest=m["rest"] or "",
        host_span=m.span("host"),
        port_span=m.span("port") if port is not None else None,
    )


def parse_with_port(text: str) -> Address | None:
    """The address `text` is when it names a port (host:port, or a URL with a port), else None."""
    a = parse(text)
    return a if a is not None and a.port is not None else None


def tokens(value: str) -> list[str]:
    """The addresses of a list-valued setting: `a:1,b:2`, `a:1 b:2`, `a:1;b:2`."""
    return [t for t in re.split(r"[,;\s]+", value.strip()) if t]


def cluster_name(host: str) -> tuple[str, str | None] | None:
    """(Service, namespace or None) a cluster DNS name means, or None for an IP or a name outside
    the cluster domain (more than svc.ns before the suffix)."""
    host = host.lower().rstrip(".")
    if not host:
        return None
    if is_ip(host):
        return None
    for suffix in _CLUSTER_SUFFIXES:
        if host.endswith(suffix):
            host = host[: -len(suffix)]
            if "." not in host:
                return None  # `x.svc` alone names no namespace
            break
    parts = host.split(".")
    if len(parts) == 1:
        return parts[0], None
    if len(parts) == 2:
        return parts[0], parts[1]
    return None
