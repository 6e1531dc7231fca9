"""A GET of a query API (Prometheus', Jaeger's) that is sent again when the connection drops before
an answer: twice at most, half a second and a second later.

A k8s:// address is a forward through the API server to a pod, and a busy node can close such a
connection before it answers; a kept-alive connection can also be closed by the server just as a
request goes out. Both reach the caller as "Remote end closed connection without response", and
neither says anything about the server's data: the reads are idempotent, so they are tried again
instead of failing a window. An answer that comes, whatever its status, and a read that times out
are not tried again: those are the server's.
"""

from __future__ import annotations

import time
from typing import Any

import requests

DELAYS_S = (0.5, 1.0)


def get(url: str, session: requests.Session | None = None, **kwargs: Any) -> requests.Response:
    """session.get(url, **kwargs) (a new connection without one), tried again on a dropped connection."""
    for delay in DELAYS_S:
        try:
            return (session or requests).get(url, **kwargs)
        except requests.ConnectionError:  # refused, reset or closed without an answer; not a read timeout
            time.sleep(delay)
    return (session or requests).get(url, **kwargs)
