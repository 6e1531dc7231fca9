"""Read request counters from a service's Prometheus exposition: how platforms answer request_counts."""

from __future__ import annotations

from collections import defaultdict

import requests
from prometheus_client.parser import text_string_to_metric_families

REQUESTS_METRIC = "http_requests_total"


def parse_requests(text: str) -> dict[str, float]:
    """Cumulative requests by status code ("200", "500", ...), summed over routes and methods."""
    out: dict[str, float] = defaultdict(float)
    for family in text_string_to_metric_families(text):
        if family.name not in (REQUESTS_METRIC, REQUESTS_METRIC.removesuffix("_total")):
            continue
        for sample in family.samples:
            if sample.name == REQUESTS_METRIC:
                out[str(sample.labels.get("status", "unknown"))] += sample.value
    return dict(out)


def scrape(url: str, session: requests.Session, timeout: float = 1.0) -> dict[str, float] | None:
    """The instance's counters, or None when it does not answer (down, stopped, or no /metrics)."""
    try:
        response = session.get(url.rstrip("/") + "/metrics", timeout=timeout)
    except requests.RequestException:
        return None
    if response.status_code != 200:
        return None
    return parse_requests(response.text)
