"""The URL of a query service faultkit reads (Jaeger, Prometheus): http(s) only. A service inside a
cluster is reached through a port-forward the user opens, so a `k8s://` URL is refused with that hint."""

from __future__ import annotations

from urllib.parse import urlparse

from faultkit.errors import UsageError


def check_url(url: str, option: str, service: str, one: str) -> str:
    """`url` without a trailing slash, or a UsageError naming `option`; `service` says what the URL
    should reach ("Jaeger's query service"), `one` names one of them ("a Jaeger")."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        how = (f" ({one} in a cluster: open `kubectl port-forward` to it and give http://127.0.0.1:PORT)"
               if parsed.scheme == "k8s" else "")
        raise UsageError(f"{option} {url!r}: not an http(s) URL of {service}{how}")
    return url.rstrip("/")
