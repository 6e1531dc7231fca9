"""`k8s://NAMESPACE/SERVICE:PORT`: a Service in a cluster, named where a URL is asked for (a
Prometheus or Jaeger the kubernetes platform reaches through the API server). Parsed here, without
the kubernetes library, so the options that take one check its shape before any platform opens."""

from __future__ import annotations

from faultkit.errors import UsageError

SERVICE_SCHEME = "k8s://"


def parse_service_url(text: str) -> tuple[str, str, int] | None:
    """`k8s://NAMESPACE/SERVICE:PORT` -> its parts; None for any other text; ValueError when it
    starts with the scheme but is not of that shape."""
    if not text.startswith(SERVICE_SCHEME):
        return None
    where, _, port = text.removeprefix(SERVICE_SCHEME).rstrip("/").rpartition(":")
    namespace, _, service = where.partition("/")
    if not (namespace and service and port.isdigit() and 0 < int(port) < 65536) or "/" in service:
        raise ValueError(f"{text}: expected {SERVICE_SCHEME}NAMESPACE/SERVICE:PORT")
    return namespace, service, int(port)


def outside_cluster(url: str, platform: str, option: str = "the URL") -> str:
    """`query_address` of a platform without a cluster: the URL as given, or a UsageError for a Service's."""
    try:
        named = parse_service_url(url)
    except ValueError as e:
        raise UsageError(f"{option} {e}") from None
    if named:
        raise UsageError(f"{option} {url!r}: names a Service in a cluster, which the {platform} platform cannot "
                         "reach; give an http(s) URL (or validate with --platform kubernetes)")
    return url
