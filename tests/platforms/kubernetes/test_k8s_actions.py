"""Direct actions on minishop's pods, carried out by the node agent, checked from the node itself.

Each test acts on one service of the shared `shop` (payment, shipping, cart: services the other
modules' tests do not measure) and leaves it as it found it: ready, no rule in its pod's netns, no
process left of its action on the node. The effects are measured on the host: restart count and exit code,
process states, the container cgroup's CPU and memory, latency through the Service's port-forward,
the share of TCP connects that go unanswered inside the pod's netns.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

import pytest
import requests
from kubernetes import client

from faultkit.apps.descriptor import load_app
from faultkit.catalog.rules.leakage import find_words, giveaway_words
from faultkit.errors import InputError, PlatformError, Unsupported
from faultkit.platforms.kubernetes import KubernetesPlatform, apply
from faultkit.validators.app_changes import ActionChange
from tests.platforms.kubernetes import node_view as node
from tests.platforms.kubernetes.k8s_support import REPO, new_platform, ns_name, wait_until

# alone: its CPU and memory stress load the whole node, and the stack's queries beside it failed
pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]


def _clean(shop: KubernetesPlatform, service: str, rules_before: str, handle: str) -> None:
    """After stop: no action in force, no process of the action's, the pod's netns as it was, nothing stopped."""
    assert shop.active_actions() == []
    assert node.tagged(handle) == []
    cid = node.container_id(node.pod_of(shop, service))
    assert node.rules(node.main_pid(cid)) == rules_before
    assert [p for p in node.procs(cid) if node.state(p) == "T"] == []


def test_kill_restarts_with_exit_137_and_failure_stops_answering(shop: KubernetesPlatform) -> None:
    [before] = shop.instances("payment")
    rules = node.rules(node.main_pid(node.container_id(node.pod_of(shop, "payment"))))
    handle = shop.start_action("instance-kill", "payment", {}, "one")
    assert shop.active_actions() == [handle]
    after = wait_until(lambda: [i for i in shop.instances("payment") if i.ready and i.restarts == before.restarts + 1],
                       90, "payment restarted in place")
    assert after[0].id == before.id and after[0].last_exit == 137
    shop.stop_action(handle)
    _clean(shop, "payment", rules, handle)

    url = shop.endpoint("payment")
    assert requests.get(url + "/readyz", timeout=5).status_code == 200
    handle = shop.start_action("instance-failure", "payment", {}, "one")
    try:
        cid = node.container_id(node.pod_of(shop, "payment"))
        assert {node.state(p) for p in node.procs(cid)} == {"T"}
        with pytest.raises(requests.RequestException):
            requests.get(url + "/readyz", timeout=2)
        # its counters do not answer, and asking takes the scrape's 2 s timeout once, not the pod
        # proxy's own ~26 s nor 4 tries of 2 s (a sample held that long leaves its window unobserved)
        asked = time.monotonic()
        assert shop.request_counts("payment") == {before.id: None}
        assert time.monotonic() - asked < 4
        wait_until(lambda: not shop.ready("payment"), 30, "payment reported not ready")
    finally:
        shop.stop_action(handle)
    wait_until(lambda: shop.ready("payment"), 60, "payment ready again")
    assert requests.get(url + "/readyz", timeout=5).status_code == 200
    _clean(shop, "payment", rules, handle)


def _cpu_seconds(pids: list[int]) -> float:
    """utime + stime of the processes, in seconds."""
    ticks = 0
    for p in pids:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def test_cpu_stress_runs_inside_the_container_cgroup(shop: KubernetesPlatform) -> None:
    cid = node.container_id(node.pod_of(shop, "shipping"))
    main, own, rules = node.main_pid(cid), node.procs(cid), node.rules(node.main_pid(cid))
    usage = node.cgroup("cpuacct", cid) / "cpuacct.usage"
    handle = shop.start_action("cpu-stress", "shipping", {"workers": 2})
    try:
        workers = [p for p in node.procs(cid) if p not in own]
        assert len(workers) == 2
        # in the container's own PID namespace, so `ps` in the container shows them
        assert {Path(f"/proc/{p}/ns/pid").readlink() for p in workers} == {Path(f"/proc/{main}/ns/pid").readlink()}
        c0, w0, t0 = int(usage.read_text()), _cpu_seconds(workers), time.monotonic()
        time.sleep(4)
        c1, w1, t1 = int(usage.read_text()), _cpu_seconds(workers), time.monotonic()
        container, busy = (c1 - c0) / 1e9, w1 - w0
        print(f"cpu-stress workers=2: workers {busy / (t1 - t0):.2f} cores, container cgroup "
              f"{container / (t1 - t0):.2f} cores (limit 0.5; the machine's load decides how much they get)")
        # the workers burn CPU, and every second of it is the container's: its cgroup counts them
        assert busy > 0.1 and container >= 0.95 * busy
        assert sum("still runs" in f for f in shop.action_leftovers(handle)) == 2  # read back (issue 29)
    finally:
        shop.stop_action(handle)
    assert shop.action_leftovers(handle) == []
    assert node.procs(cid) == own
    _clean(shop, "shipping", rules, handle)


def test_memory_stress_counts_against_the_limit_and_past_it_is_a_real_oom_kill(shop: KubernetesPlatform) -> None:
    cid = node.container_id(node.pod_of(shop, "shipping"))
    rules, base = node.rules(node.main_pid(cid)), node.memory_mib(cid)
    handle = shop.start_action("memory-stress", "shipping", {"mb": 96})
    try:
        grown = wait_until(lambda: (m := node.memory_mib(cid)) > base + 90 and m, 30, "96 MiB held in the cgroup")
        print(f"memory-stress mb=96: container cgroup {base:.0f} -> {grown:.0f} MiB")
    finally:
        shop.stop_action(handle)
    assert node.memory_mib(cid) < base + 30
    _clean(shop, "shipping", rules, handle)

    [before] = shop.instances("shipping")
    handle = shop.start_action("memory-stress", "shipping", {})  # the default 256 MiB, at a 256Mi limit
    try:
        oom = wait_until(lambda: [i for i in shop.instances("shipping") if i.oom_kills > before.oom_kills], 90,
                         "shipping OOM-killed")
        assert oom[0].restarts == before.restarts + 1 and oom[0].last_exit == 137
    finally:
        shop.stop_action(handle)
    wait_until(lambda: shop.ready("shipping"), 90, "shipping ready after its OOM kill")
    _clean(shop, "shipping", rules, handle)


def _latency(url: str, n: int = 6) -> float:
    times = []
    for _ in range(n):
        t = time.monotonic()
        assert requests.get(url + "/readyz", timeout=20).status_code == 200
        times.append(time.monotonic() - t)
    return statistics.median(times)


def test_network_delay_holds_packets_in_the_pod_netns(shop: KubernetesPlatform) -> None:
    cid = node.container_id(node.pod_of(shop, "cart"))
    pid = node.main_pid(cid)
    rules, url = node.rules(pid), shop.endpoint("cart")
    plain = _latency(url)
    handle = shop.start_action("network-delay", "cart", {"ms": 400})
    try:
        assert "-j NFQUEUE" in node.rules(pid)
        delayed = _latency(url)
        print(f"network-delay ms=400: request through the port-forward {plain * 1000:.0f} -> {delayed * 1000:.0f} ms")
        # a new connection's SYN and its request each wait 400 ms
        assert delayed - plain > 0.7
        assert shop.ready("cart")  # the kubelet's probes come from the node, which the rule leaves alone
        # the agent's read-back sees what is in force: the rule, its chain and the packet holder (issue 29)
        found = shop.action_leftovers(handle)
        assert any("jumps to" in f for f in found) and any("chain" in f for f in found), found
        assert any("still runs" in f for f in found), found
    finally:
        shop.stop_action(handle)
    assert shop.action_leftovers(handle) == []
    assert _latency(url) < plain + 0.2
    _clean(shop, "cart", rules, handle)


def test_network_loss_drops_the_share_of_packets_asked(shop: KubernetesPlatform) -> None:
    pod = node.pod_of(shop, "cart")
    pid = node.main_pid(node.container_id(pod))
    ip, rules = pod["status"]["podIP"], node.rules(pid)
    assert node.failed_connects(pid, ip, 7070, n=50) == 0
    handle = shop.start_action("network-loss", "cart", {"percent": 40})
    try:
        share = node.failed_connects(pid, ip, 7070, n=100)
        print(f"network-loss percent=40: {share:.1%} of 100 connects unanswered in 0.25 s")
        assert 0.25 <= share <= 0.55
    finally:
        shop.stop_action(handle)
    assert node.failed_connects(pid, ip, 7070, n=50) == 0
    _clean(shop, "cart", rules, handle)


def test_refusals_and_nothing_in_the_app_namespace_names_it(shop: KubernetesPlatform) -> None:
    with pytest.raises(Unsupported, match="dns-error.*no way"):
        shop.start_action("dns-error", "cart", {})
    with pytest.raises(InputError, match="'workers'.*outside"):
        shop.start_action("cpu-stress", "cart", {"workers": 0})
    with pytest.raises(InputError, match="no running action"):
        shop.stop_action("not a handle")
    shop.stop_action("cpu-stress-0123456789")  # well formed, not in force: nothing left to stop
    assert shop.active_actions() == []
    ns = shop.record().namespace
    api = client.ApiClient()
    texts = [json.dumps(api.sanitize_for_serialization(o), default=str)
             for o in [*shop.conn.core.list_namespaced_pod(ns).items, *shop.conn.core.list_namespaced_event(ns).items]]
    words = giveaway_words(REPO)
    assert {w for t in texts for w in find_words(t, words)} == set()
    assert not any("node-agent" in t or f"{ns}-node" in t for t in texts)


def test_down_stops_actions_and_deletes_the_agent_namespace(shop: KubernetesPlatform, tmp_path: Path, kubeconfig: str,
                                                            core: client.CoreV1Api, apps_api: client.AppsV1Api) -> None:
    """An app deployed by other tooling (adopted): down stops the action and deletes the agent's
    namespace, and leaves the app's namespace and Deployment as they were."""
    ns = ns_name("adopted")
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    try:
        desc = load_app(shop.workspace, "minishop")
        objs = [o for o in apply.render(desc, ns, {"email": shop.record().images["email"]}, REPO)
                if o["metadata"]["name"] == "email"]
        apply.server_side_apply(shop.conn, objs, "someone-else")
        wait_until(lambda: (apps_api.read_namespaced_deployment("email", ns).status.available_replicas or 0) >= 1,
                   120, "the adopted email Deployment available")
        p = new_platform(tmp_path / "adopt", kubeconfig, adopt=ns)
        p.up("minishop")
        cid = node.container_id(node.pod_of(p, "email"))
        own = node.procs(cid)
        handle = p.start_action("cpu-stress", "email", {"workers": 1})
        assert len(node.procs(cid)) == len(own) + 1
        agent_ns = f"{ns}-node"
        assert core.read_namespace(agent_ns).status.phase == "Active"
        p.down()
        assert not p.is_up()
        assert node.procs(cid) == own and node.tagged(handle) == []
        assert [n.metadata.name for n in core.list_namespace().items if n.metadata.name == agent_ns] == []
        assert apps_api.read_namespaced_deployment("email", ns).status.available_replicas == 1
    finally:
        core.delete_namespace(ns)
    with pytest.raises(PlatformError, match="nothing is up"):
        p.start_action("cpu-stress", "email", {})


def test_another_process_stops_an_action_from_the_journal_record(shop: KubernetesPlatform, kubeconfig: str) -> None:
    """What `recover` does after a kill: a new platform object on the same state folder undoes the
    journal's ActionChange, with its handle or (killed before the handle was recorded) without."""
    cid = node.container_id(node.pod_of(shop, "shipping"))
    own, rules = node.procs(cid), node.rules(node.main_pid(cid))
    for keep_handle in (True, False):
        change = ActionChange("cpu-stress", "shipping", {"workers": 1}, mode="all").apply(shop)
        assert change.handle and len(node.procs(cid)) == len(own) + 1
        later = new_platform(shop.workspace.state_dir, kubeconfig)
        assert later.active_actions() == [change.handle]
        (change if keep_handle else ActionChange("cpu-stress", "shipping", {"workers": 1})).undo(later)
        assert node.procs(cid) == own
        _clean(shop, "shipping", rules, change.handle)
