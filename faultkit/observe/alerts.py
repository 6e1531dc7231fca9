"""The alerts an agent would be paged with during a window, from Prometheus' alerts API (issue 31).

Prometheus evaluates the application's rule pack (apps/<app>/alerts.yaml) and serves every alert
that is pending or firing at `/api/v1/alerts`. The sampler asks at each of its samples; an alert is
recorded once per window by its name and labels, with the most advanced state it was seen in
(firing over pending), when Prometheus says it became active, and the first and last sample that
saw it (and the first that saw it firing). An alert that fired and resolved between two samples is
not seen: the sampling interval bounds what is missed.

Several instances of an app may report to one stack (a campaign's workers, each in a namespace of its
own). A watch given the platform's scope as labels ({"k8s_namespace_name": NS}) keeps an alert unless one of
its labels names another instance; an alert whose rule sums the scope's label away is kept, as the
agent of any instance would see it. The window records the scope. An app that runs in several sites
(one namespace each) is one instance to its agent: the other sites' scopes are given too, and an
alert of any of its sites is kept (a fault in one site may page from another).

Only an http(s) URL is read, as for Jaeger: a Prometheus inside a cluster is reached through a
port-forward the user opens.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NotRequired, TypedDict

from faultkit import query_reads
from faultkit.observe import query_url

TIMEOUT_S = 5.0


class AlertRecord(TypedDict):
    alert: str
    labels: dict[str, str]  # without alertname
    state: str  # "firing" when any sample saw it firing, else "pending"
    active_at: float | None  # when Prometheus says it became active (epoch seconds)
    first_seen: float
    last_seen: float
    firing_seen: NotRequired[float]  # the first sample that saw it firing


class WindowAlerts(TypedDict):
    source: str  # the Prometheus URL, as the user gave it
    polls: int
    failed_polls: int
    scope: NotRequired[dict[str, str]]  # the labels an alert of another instance differs in
    other_sites: NotRequired[dict[str, dict[str, str]]]  # site -> its scope, for an app in several sites
    error: NotRequired[str]  # the last failed poll's reason
    alerts: list[AlertRecord]  # sorted by name and labels


def check_url(url: str, option: str = "--alerts", in_cluster: bool = False) -> str:
    """The Prometheus URL without a trailing slash, or a UsageError that names the option."""
    return query_url.check_url(url, option, "a Prometheus", "a Prometheus", in_cluster)


def active_alerts(url: str) -> list[dict[str, Any]]:
    """The alerts Prometheus holds now (pending and firing), as its API gives them. Raises OSError
    (requests' errors are OSErrors) or ValueError when there is no good answer."""
    resp = query_reads.get(f"{url}/api/v1/alerts", timeout=TIMEOUT_S)
    if resp.status_code != 200:
        raise ValueError(f"HTTP {resp.status_code}")
    body = resp.json()
    alerts = (body.get("data") or {}).get("alerts") if isinstance(body, dict) else None
    if not isinstance(alerts, list):
        raise ValueError("no data.alerts in the answer")
    return alerts


def _epoch(text: Any) -> float | None:
    try:
        return round(datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp(), 3)
    except ValueError:
        return None


class AlertWatch:
    """Polls one Prometheus over a window and keeps what it saw; `take()` ends the window. Polls may
    overlap (the sampler sends each beside its sample), so what they record is kept under a lock."""

    def __init__(self, url: str, name: str = "", scope: Mapping[str, str] | None = None,
                 other_sites: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.url = check_url(url)
        self.name = name or self.url  # as the user gave it (a k8s:// Service is read through a forward)
        self.scope = dict(sorted((scope or {}).items()))
        self.other_sites = {site: dict(sorted(s.items())) for site, s in sorted((other_sites or {}).items())}
        self.lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.seen: dict[tuple[str, tuple[tuple[str, str], ...]], AlertRecord] = {}
        self.polls = self.failed = 0
        self.error = ""

    def poll(self, t: float) -> None:
        try:
            alerts = active_alerts(self.url)
        except (OSError, ValueError) as e:
            with self.lock:
                self.polls += 1
                self.failed += 1
                self.error = f"{type(e).__name__}: {e}"[:300]
            return
        with self.lock:
            self.polls += 1
            self._record(alerts, t)

    def _record(self, alerts: list[dict[str, Any]], t: float) -> None:
        for a in alerts:
            labels = {str(k): str(v) for k, v in (a.get("labels") or {}).items()}
            name = labels.pop("alertname", "")
            state = str(a.get("state", ""))
            if state not in ("pending", "firing") or self._elsewhere(labels):
                continue
            key = (name, tuple(sorted(labels.items())))
            record = self.seen.setdefault(key, {"alert": name, "labels": dict(sorted(labels.items())),
                                                "state": state, "active_at": _epoch(a.get("activeAt")),
                                                "first_seen": round(t, 3), "last_seen": round(t, 3)})
            record["last_seen"] = round(t, 3)
            if state == "firing":
                record["state"] = "firing"
                record.setdefault("firing_seen", round(t, 3))

    def _elsewhere(self, labels: Mapping[str, str]) -> bool:
        """Whether an alert's labels name another instance than the scope's (and its other sites')."""
        return all(any(k in labels and labels[k] != v for k, v in scope.items())
                   for scope in (self.scope, *self.other_sites.values()))

    def take(self) -> WindowAlerts:
        with self.lock:
            out: WindowAlerts = {"source": self.name, "polls": self.polls, "failed_polls": self.failed,
                                 "alerts": [self.seen[k] for k in sorted(self.seen)]}
            if self.scope:
                out["scope"] = dict(self.scope)
            if self.other_sites:
                out["other_sites"] = {site: dict(s) for site, s in self.other_sites.items()}
            if self.error:
                out["error"] = self.error
            self._reset()
        return out
