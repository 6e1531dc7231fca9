"""Waits that watch, live: a wait ends on the API's event, not on the next tick of a clock."""

from __future__ import annotations

import threading
import time

import pytest
from kubernetes import client

from faultkit.platforms.kubernetes import watching
from faultkit.platforms.kubernetes.connection import Connection
from tests.platforms.kubernetes.k8s_support import ns_name

pytestmark = [pytest.mark.live, pytest.mark.exclusive]


def test_a_wait_ends_on_the_event_and_only_then(kubeconfig: str, core: client.CoreV1Api) -> None:
    ns = ns_name("watch")
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    conn = Connection(kubeconfig)
    reads = []

    def made() -> bool:
        reads.append(time.monotonic())
        return any(a.metadata.name == "late" for a in core.list_namespaced_service_account(ns).items)

    try:
        # nothing changes: the wait runs to its timeout, checking at most every FALLBACK_S
        start = time.monotonic()
        assert watching.until(conn, ns, ("serviceaccounts",), made, bool, 3.0) is False
        assert 3.0 <= time.monotonic() - start < 3.0 + watching.FALLBACK_S
        assert len(reads) < 10  # no tight loop: the first check, fallbacks, and the watches' (re)starts

        # the object appears 0.5 s in: the wait ends on its event, not at the fallback check 2 s in
        def later() -> None:
            time.sleep(0.5)
            made_at.append(time.monotonic())
            account = client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="late"))
            core.create_namespaced_service_account(ns, account)

        made_at: list[float] = []
        threading.Thread(target=later).start()
        assert watching.until(conn, ns, ("serviceaccounts",), made, bool, 30.0) is True
        late = time.monotonic() - made_at[0]
        assert late < 0.8, f"the wait ended {late:.2f}s after the change"
        # the threads that watched are gone soon after
        deadline = time.monotonic() + watching.READ_TIMEOUT_S + 3
        while any(t.name.startswith(f"watch-serviceaccounts-{ns}") for t in threading.enumerate()):
            assert time.monotonic() < deadline, "a watch thread outlived its wait"
            time.sleep(0.2)
    finally:
        core.delete_namespace(ns)
