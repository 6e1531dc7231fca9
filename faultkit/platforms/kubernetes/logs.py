"""The pod logs API as the protocol's LogRecords, each line parsed as every platform parses it (logline.py).

Every pod of the service is read since the given time, and, for a container that has restarted,
its previous instance too (a crash's last words are in the previous container's log).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubernetes.client.exceptions import ApiException

from faultkit.apps.logformat import JSON_LINES, LogFormat
from faultkit.platforms.base import LogRecord
from faultkit.platforms.kubernetes.connection import Connection
from faultkit.platforms.logline import log_record, log_records, log_source


def split_k8s_line(line: str) -> tuple[float, str, bool] | None:
    """`2026-12-01T08:30:00.123456789Z <line>` (timestamps=true) -> (ts, raw line, False)."""
    stamp, _, raw = line.partition(" ")
    try:
        ts = datetime.fromisoformat(stamp[:26].rstrip("Z") + "+00:00").timestamp()
    except ValueError:
        return None
    return ts, raw, False


def parse_k8s_line(line: str, service: str, instance: str, fmt: LogFormat = JSON_LINES) -> LogRecord | None:
    split = split_k8s_line(line)
    return log_record(split[0], split[1], service, instance, fmt=fmt) if split else None


def pod_log_source(fmt: LogFormat) -> dict[str, object]:
    """Logs come from the pod logs API, each line read in the app's format."""
    return log_source("pods", fmt)


def pod_logs(conn: Connection, namespace: str, pod: dict[str, Any], container: str, service: str, instance: str,
             since: float, until: float | None, fmt: LogFormat = JSON_LINES) -> list[LogRecord]:
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
        lines = [s for s in map(split_k8s_line, str(text).splitlines()) if s is not None]
        # in the app's format: a text format's continuation lines join the record before them
        out += [r for r in log_records(lines, service, instance, fmt)
                if r.ts >= since and (until is None or r.ts <= until)]
    return out
