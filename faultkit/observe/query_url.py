"""The URL of a query service faultkit reads (Jaeger, Prometheus): http(s); where a platform reaches
it (validate, the gate), also `k8s://NAMESPACE/SERVICE:PORT`, a Service in the cluster that the
kubernetes platform forwards to. Elsewhere (`apps observe`) a `k8s://` URL is refused with a hint."""

from __future__ import annotations

from urllib.parse import urlparse

from faultkit.errors import UsageError
from faultkit.platforms.service_url import SERVICE_SCHEME, parse_service_url


def check_url(url: str, option: str, service: str, one: str, in_cluster: bool = False) -> str:
    """`url` without a trailing slash, or a UsageError naming `option`; `service` says what the URL
    should reach ("Jaeger's query service"), `one` names one of them ("a Jaeger"). `in_cluster`: a
    platform will reach it, so a Service's k8s:// URL is accepted as well (its shape checked)."""
    if in_cluster:
        try:
            if parse_service_url(url):
                return url.rstrip("/")
        except ValueError as e:
            raise UsageError(f"{option} {e}") from None
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        how = (f" ({one} in a cluster: give {SERVICE_SCHEME}NAMESPACE/SERVICE:PORT where a platform reaches it, "
               "or open `kubectl port-forward` to it and give http://127.0.0.1:PORT)"
               if parsed.scheme == "k8s" else "")
        raise UsageError(f"{option} {url!r}: not an http(s) URL of {service}{how}")
    return url.rstrip("/")
