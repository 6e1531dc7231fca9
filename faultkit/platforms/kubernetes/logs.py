"""The pod logs API as the protocol's LogRecords, each line parsed as every platform parses it (logline.py).

Every pod of the service is read since the given time, and, for a container that has restarted,
its previous instance too (a crash's last words are in the previous container's log).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubernetes.client.exceptions import ApiException

from faultkit.platforms.base import LogRecord
from faultkit.platforms.kubernetes.connection import Connection
from faultkit.platforms.logline import log_record


def parse_k8s_line(line: str, service: str, instance: str) -> LogRecord | None:
    """`2026-12-01T08:30:00.123456789Z <line>` (timestamps=true) -> LogRecord."""
    stamp, _, raw = line.partition(" ")
    try:
        ts = datetime.fromisoformat(stamp[:26].rstrip("Z") + "+00:00").timestamp()
    except ValueError:
        return None
    return log_record(ts, raw, service, instance)


def pod_logs(conn: Connection, namespace: str, pod: dict[str, Any], container: str, service: str, instance: str,
             since: float, until: float | None) -> list[LogRecord]:
    import time

    name = pod["metadata"]["name"]
    restarted = any(s.get("name") == container and int(s.get("restartCount") or 0) > 0
                    for s in (pod.get("status") or {}).get("containerStatuses") or [])
    out: list[LogRecord] = []
    for previous in ([True, False] if restarted else [False]):
        try:
            text = conn.core.read_namespaced_pod_log(
                name, namespace, container=container, timestamps=True, previous=previous,
                since_seconds=max(1, int(time.time() - since) + 2), _request_timeout=20)
        except ApiException as e:
            if e.status in (400, 404):  # not started yet, or no previous container: nothing to read
                continue
            raise
        for line in str(text).splitlines():
            rec = parse_k8s_line(line, service, instance)
            if rec is None or rec.ts < since or (until is not None and rec.ts > until):
                continue
            out.append(rec)
    return out
