"""Waiting on the API's watch: a condition read from the cluster is checked again when an object it
reads changes, not on a clock.

`until` opens one watch per kind of object it is told the condition reads (a thread each), checks
the condition, and checks it again after every event. A watch that ends or breaks is opened again,
and a change between the first check and a watch's start is caught by checking at least every
FALLBACK_S: events decide how soon a wait ends, never whether it does.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from faultkit.platforms.kubernetes.connection import Connection

T = TypeVar("T")
FALLBACK_S = 2.0
# a quiet watch's read gives up this soon, so its thread sees the wait is over and ends
READ_TIMEOUT_S = 2.0
# events come in bursts (a rollout moves a pod, its ReplicaSet, the Deployment and a slice at once)
SETTLE_S = 0.05


def _lister(api: client.ApiClient, kind: str, namespace: str
            ) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
    """The list call a watch of `kind` in `namespace` is made with: (function, args, kwargs)."""
    if kind == "namespace":  # the namespace itself: cluster-scoped, picked by name
        return client.CoreV1Api(api).list_namespace, (), {"field_selector": f"metadata.name={namespace}"}
    calls = {
        "pods": client.CoreV1Api(api).list_namespaced_pod,
        "serviceaccounts": client.CoreV1Api(api).list_namespaced_service_account,
        "replicasets": client.AppsV1Api(api).list_namespaced_replica_set,
        "deployments": client.AppsV1Api(api).list_namespaced_deployment,
        "endpointslices": client.DiscoveryV1Api(api).list_namespaced_endpoint_slice,
    }
    return calls[kind], (namespace,), {}


class _Watches:
    """Watches on some kinds of object in a namespace; `changed` is set on every event of any."""

    def __init__(self, conn: Connection, namespace: str, kinds: tuple[str, ...]) -> None:
        self.changed = threading.Event()
        self._over = threading.Event()
        # connections of their own: a watch holds one for its whole life, and the platform's pool
        # (ten) would otherwise be short for its other calls
        settings = copy.copy(conn.api.configuration)
        settings.connection_pool_maxsize = len(kinds) + 1
        api = client.ApiClient(settings)
        self._threads = [
            threading.Thread(target=self._run, args=_lister(api, kind, namespace), daemon=True,
                             name=f"watch-{kind}-{namespace}")
            for kind in kinds
        ]
        for t in self._threads:
            t.start()

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        while not self._over.is_set():
            w = watch.Watch()
            try:
                # raw events: only that something changed matters, and the client's models refuse
                # some objects the API serves (an EndpointSlice whose `endpoints` is null)
                for _ in w.stream(fn, *args, **kwargs, deserialize=False, timeout_seconds=60,
                                  _request_timeout=(5, READ_TIMEOUT_S)):
                    self.changed.set()
                    if self._over.is_set():
                        w.stop()
            except (ApiException, HTTPError, OSError, ValueError):
                # a quiet watch timing out, or a broken one: open it again (the fallback check covers
                # what happens meanwhile), a little later when the API server itself is away
                self._over.wait(0.2)

    def close(self) -> None:
        self._over.set()


def until(conn: Connection, namespace: str, kinds: tuple[str, ...], check: Callable[[], T],
          done: Callable[[T], bool], timeout: float) -> T:
    """check() until done(its result) or `timeout` seconds, again on every change of `kinds` in
    `namespace`; the last result either way."""
    deadline = time.monotonic() + timeout
    watches = _Watches(conn, namespace, kinds)
    try:
        while True:
            watches.changed.clear()
            result = check()
            left = deadline - time.monotonic()
            if done(result) or left <= 0:
                return result
            if watches.changed.wait(min(FALLBACK_S, left)):
                time.sleep(SETTLE_S)
    finally:
        watches.close()
