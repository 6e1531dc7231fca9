"""Read request counts from a service's Prometheus exposition: how platforms answer request_counts.

Which counter and which label hold the status is the descriptor's `signals.requests` (apps/signals.py);
the default is OpenTelemetry's `http.server.request.duration` histogram as the SDK's Prometheus
exporter prints its count.
"""

from __future__ import annotations

from collections import defaultdict

import requests
from prometheus_client.parser import text_string_to_metric_families

from faultkit.apps.signals import EXPOSITION, RequestSignal
from faultkit.errors import Unsupported

DEFAULT = RequestSignal()


def parse_requests(text: str, signal: RequestSignal = DEFAULT) -> dict[str, float]:
    """Cumulative requests by status code ("200", "500", ...), summed over every other label."""
    out: dict[str, float] = defaultdict(float)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == signal.metric:
                out[str(sample.labels.get(signal.status_label, "unknown"))] += sample.value
    return dict(out)


def require_exposition(signal: RequestSignal, where: str) -> None:
    """Refuse a request signal that only a Prometheus can answer, naming the way to give one."""
    if signal.kind != EXPOSITION:
        raise Unsupported(f"signals.requests.kind {signal.kind} is read by PromQL, which {where} does not "
                          "do; use the kubernetes platform with --prometheus URL, or kind exposition")


def scrape(url: str, session: requests.Session, signal: RequestSignal = DEFAULT,
           timeout: float = 1.0) -> dict[str, float] | None:
    """The instance's counts, or None when it does not answer (down, stopped, or no /metrics)."""
    try:
        response = session.get(url.rstrip("/") + "/metrics", timeout=timeout)
    except requests.RequestException:
        return None
    if response.status_code != 200:
        return None
    return parse_requests(response.text, signal)
