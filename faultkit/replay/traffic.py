"""The entry service's traffic: per instance, cumulative requests by status and the request-duration
histogram's count and its count above the latency bucket, from each instance's /metrics.

The counts are the descriptor's signals.requests (by default the count of OpenTelemetry's
`http.server.request.duration`); the latency buckets are that histogram's, when the counter is a
histogram's `_count`. A run record keeps the parsed figures, never the exposition, so records
made before issue 30 (minishop's own counter and histogram) read as they were."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import requests
from prometheus_client.parser import text_string_to_metric_families

from faultkit.apps.signals import RequestSignal
from faultkit.platforms.base import Platform
from faultkit.platforms.counters import DEFAULT

# the semantic conventions' advised bounds for http.server.request.duration (prometheus_client's
# defaults too), which minishop's services use
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)


def bucket_for(latency_ms: float) -> float:
    """The smallest histogram bound at or above the threshold: requests above it are slow."""
    return next((b for b in BUCKETS if b * 1000 >= latency_ms), BUCKETS[-1])


def parse(text: str, bucket_s: float, signal: RequestSignal = DEFAULT) -> dict[str, Any]:
    by_status: dict[str, float] = defaultdict(float)
    count = under = 0.0
    histogram = signal.metric.removesuffix("_count")
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == signal.metric:
                by_status[str(s.labels.get(signal.status_label, "unknown"))] += s.value
            if s.name == histogram + "_count":
                count += s.value
            elif s.name == histogram + "_bucket" and s.labels.get("le") not in (None, "+Inf") \
                    and abs(float(s.labels["le"]) - bucket_s) < 1e-9:
                under += s.value
    return {"requests": dict(sorted(by_status.items())), "count": count, "slow": count - under}


class Traffic:
    def __init__(self, platform: Platform, service: str, bucket_s: float, signal: RequestSignal = DEFAULT) -> None:
        self.platform = platform  # each instance's /metrics, at its own address (instance_endpoints)
        self.service = service
        self.bucket_s = bucket_s
        self.signal = signal
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
                out[iid] = parse(r.text, self.bucket_s, self.signal)
        return {"t": round(t, 3), "instances": out}

    def close(self) -> None:
        self.session.close()
