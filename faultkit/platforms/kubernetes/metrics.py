"""Request counters per pod, read through the API server's pod proxy (no route to pod IPs needed)."""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from faultkit.platforms.counters import parse_requests
from faultkit.platforms.kubernetes.connection import Connection


def pod_requests(conn: Connection, namespace: str, pod: str, port: int,
                 timeout: float = 2.0) -> dict[str, float] | None:
    """The pod's cumulative requests by status, or None when it does not answer."""
    try:
        text = conn.core.connect_get_namespaced_pod_proxy_with_path(
            f"{pod}:{port}", namespace, "metrics", _request_timeout=timeout)
    except (ApiException, HTTPError, OSError):
        return None
    return parse_requests(str(text))
