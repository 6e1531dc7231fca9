"""The entry service's traffic: per instance, cumulative requests by status and the request-duration
histogram's count and its count above the latency bucket, from each instance's /metrics."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import requests
from prometheus_client.parser import text_string_to_metric_families

from faultkit.platforms.base import Platform
from faultkit.platforms.counters import REQUESTS_METRIC

DURATION = "http_request_duration_seconds"
# prometheus_client's default histogram bounds, which minishop's services use
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)


def bucket_for(latency_ms: float) -> float:
    """The smallest histogram bound at or above the threshold: requests above it are slow."""
    return next((b for b in BUCKETS if b * 1000 >= latency_ms), BUCKETS[-1])


def parse(text: str, bucket_s: float) -> dict[str, Any]:
    by_status: dict[str, float] = defaultdict(float)
    count = under = 0.0
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == REQUESTS_METRIC:
                by_status[str(s.labels.get("status", "unknown"))] += s.value
            elif s.name == DURATION + "_count":
                count += s.value
            elif s.name == DURATION + "_bucket" and s.labels.get("le") not in (None, "+Inf") \
                    and abs(float(s.labels["le"]) - bucket_s) < 1e-9:
                under += s.value
    return {"requests": dict(sorted(by_status.items())), "count": count, "slow": count - under}


class Traffic:
    def __init__(self, platform: Platform, service: str, bucket_s: float) -> None:
        self.platform = platform  # each instance's /metrics, at its own address (instance_endpoints)
        self.service = service
        self.bucket_s = bucket_s
        self.session = requests.Session()

    def sample(self) -> dict[str, Any]:
        t = time.time()
        out: dict[str, Any] = {}
        for iid, url in sorted(self.platform.instance_endpoints(self.service).items()):
            try:
                r = self.session.get(url.rstrip("/") + "/metrics", timeout=1.0)
            except requests.RequestException:
                continue  # down: no counters this time; the next sample's delta covers the gap
            if r.status_code == 200:
                out[iid] = parse(r.text, self.bucket_s)
        return {"t": round(t, 3), "instances": out}

    def close(self) -> None:
        self.session.close()
