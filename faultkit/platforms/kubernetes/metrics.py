"""Request counts per pod: through the API server's pod proxy (the default: no route to pod IPs
needed), or with `--prometheus URL` as PromQL over the HTTP API of a Prometheus that scrapes the pods
or the collector. Which series and labels is the descriptor's `signals.requests` (apps/signals.py).

The Prometheus path for kind exposition assumes the labelling that the Kubernetes pod discovery
examples and kube-prometheus give: each series carries the pod's `namespace` and `pod`. A pod whose last scrape
failed (`up == 0`), or that Prometheus has not discovered yet, did not answer (None), as on the pod
proxy; Prometheus' values lag by up to one scrape interval, which the sampler's rates absorb.
"""

from __future__ import annotations

from collections import defaultdict

import requests
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from faultkit import query_reads
from faultkit.apps.signals import EXPOSITION, RequestSignal
from faultkit.errors import PlatformError
from faultkit.platforms.counters import DEFAULT, parse_requests
from faultkit.platforms.kubernetes.connection import Connection

Counts = dict[str, float] | None


def pod_requests(conn: Connection, namespace: str, pod: str, port: int, signal: RequestSignal = DEFAULT,
                 timeout: float = 2.0) -> dict[str, float] | None:
    """The pod's cumulative requests by status, or None when it does not answer."""
    try:
        # once, with a (connect, read) pair: the client takes a lone number only when it is an int and
        # drops a float without a word, and a frozen pod then held a sample for the proxy's own ~26 s
        text = conn.core_once.connect_get_namespaced_pod_proxy_with_path(
            f"{pod}:{port}", namespace, "metrics", _request_timeout=(timeout, timeout))
    except (ApiException, HTTPError, OSError):
        return None
    return parse_requests(str(text), signal)


def request_source(prometheus_url: str, namespace: str, signal: RequestSignal) -> dict[str, object]:
    """Where request counts are read, as a window's `sources` records it."""
    if prometheus_url:
        # an app that marks the probe's requests has them left out of what PromQL counts (signals.py)
        return {"kind": "promql", "signal": signal.kind, "endpoint": prometheus_url,
                "query": signal.promql(namespace, ["<the service's pods>"]), "metric": signal.metric,
                "probe_counted": not signal.probe_marked}
    return {"kind": "pod-proxy", "signal": signal.kind, "endpoint": "/metrics", "metric": signal.metric}


def _label_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


class PromQL:
    """A Prometheus server's instant queries (GET /api/v1/query)."""

    def __init__(self, url: str, timeout: float = 3.0, name: str = "") -> None:
        self.url = url.rstrip("/")
        self.name = name or self.url  # as the user gave it (k8s://... reaches a forward's loopback URL)
        self.timeout = timeout
        self.session = requests.Session()

    def query(self, promql: str) -> list[tuple[dict[str, str], float]]:
        """The instant vector's samples as (labels, value)."""
        try:
            r = query_reads.get(f"{self.url}/api/v1/query", self.session, params={"query": promql},
                                timeout=self.timeout)
            body = r.json()
        except (requests.RequestException, ValueError) as e:
            raise PlatformError(f"--prometheus {self.name}: no answer to a query ({e}); check that Prometheus runs "
                                "there") from None
        if r.status_code != 200 or body.get("status") != "success":
            raise PlatformError(f"--prometheus {self.name}: query {promql!r} failed: "
                                f"{body.get('error') or r.status_code}")
        data = body.get("data") or {}
        if data.get("resultType") != "vector":
            raise PlatformError(f"--prometheus {self.name}: query {promql!r} gave a {data.get('resultType')}, "
                                "not an instant vector")
        return [(dict(s.get("metric") or {}), float(s["value"][1])) for s in data.get("result") or []]

    def check(self) -> None:
        """Refuse a URL where no Prometheus answers, at `up`, rather than at the first window."""
        self.query("vector(1)")

    def requests_by_pod(self, namespace: str, pods: list[str], signal: RequestSignal = DEFAULT) -> dict[str, Counts]:
        """Each pod's cumulative requests by status, summed over routes and methods as parse_requests does.

        For kind exposition scraped from the pods, a pod Prometheus has not scraped, or whose last
        scrape failed, did not answer (None); series a collector exports (pushed over OTLP,
        spanmetrics, a user's query) have no such target, so a pod without a series there has
        counted nothing yet ({})."""
        if not pods:
            return {}
        out: dict[str, Counts] = {p: {} for p in pods}
        if signal.kind == EXPOSITION:
            where = f'namespace="{_label_value(namespace)}",pod=~"{"|".join(_label_value(p) for p in pods)}"'
            scraped = {m.get("pod", ""): v for m, v in self.query(f"max by (pod) (up{{{where}}})")}
            if scraped:  # scraped from the pods; pushed over OTLP there is no target to answer or not
                out = {p: ({} if scraped.get(p, 0) >= 1 else None) for p in pods}
        sums: dict[str, dict[str, float]] = defaultdict(dict)
        for m, v in self.query(signal.promql(namespace, pods)):
            by_status = sums[m.get(signal.pod_label, "")]
            status = signal.status_of(m)
            by_status[status] = by_status.get(status, 0.0) + v
        for pod, by_status in sums.items():
            if out.get(pod) is not None:
                out[pod] = by_status
        return out


def vanished_as_unanswered(by_pod: dict[str, Counts], counted: set[str]) -> dict[str, Counts]:
    """A pod whose pushed series were there before and are missing from one answer did not answer
    (None), rather than count nothing ({}): the screens read {} after counts as a reset, and one
    answer without a collector's series (Bank of Anthos' frontend, for one second of a window) made
    a before window count its whole history. `counted` (the pods seen with counts) is updated."""
    out: dict[str, Counts] = {}
    for pod, counts in by_pod.items():
        if counts:
            counted.add(pod)
        out[pod] = None if counts == {} and pod in counted else counts
    return out
