"""`--prometheus URL`: request counters by PromQL, against a real Prometheus (Debian's `prometheus`).

The Prometheus listens on loopback and scrapes each pod's declared container port on its pod IP,
which the one-node cluster's bridge routes from this host; its targets come from a file_sd file the
test writes from the pod list (Debian's build has no Kubernetes discovery). Its counts
must agree with the pod-proxy path: read between two pod-proxy readings, each PromQL count lies
between them.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import yaml
from kubernetes import client

from faultkit.platforms.kubernetes import KubernetesPlatform
from tests.helpers.cli import cli_env, run_cli
from tests.platforms.kubernetes.k8s_support import REPO, ns_name, wait_until

pytestmark = [pytest.mark.live, pytest.mark.exclusive]

SERVICES = ("frontend", "cart", "checkout")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def prometheus(shop: KubernetesPlatform, core: client.CoreV1Api,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("the prometheus binary is missing: install Debian's `prometheus` package (.ci/run does)",
                    pytrace=False)
    tmp = tmp_path_factory.mktemp("prometheus")
    # Debian builds Prometheus without Kubernetes discovery, so the test discovers for it: each pod of
    # the namespace, by its IP and declared container port, labelled as Kubernetes discovery is usually
    # relabelled (namespace, pod), in a file Prometheus watches
    ns = shop.record().namespace
    groups = []
    for pod in core.list_namespaced_pod(ns).items:
        if pod.metadata.deletion_timestamp or not pod.status.pod_ip:
            continue
        for c in pod.spec.containers:
            for cp in c.ports or []:
                groups.append({"targets": [f"{pod.status.pod_ip}:{cp.container_port}"],
                               "labels": {"namespace": ns, "pod": pod.metadata.name}})
    (tmp / "pods.json").write_text(json.dumps(groups))
    conf = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [{"job_name": "pods", "file_sd_configs": [{"files": [str(tmp / "pods.json")]}]}],
    }
    (tmp / "prometheus.yml").write_text(yaml.safe_dump(conf))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([binary, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=(tmp / "log").open("w"))
    try:
        def ready() -> bool:
            assert proc.poll() is None, (tmp / "log").read_text()[-2000:]
            try:
                return requests.get(f"{url}/-/ready", timeout=1).status_code == 200
            except requests.RequestException:
                return False
        wait_until(ready, 60, "Prometheus to be ready")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_promql_counts_agree_with_the_pod_proxy(shop: KubernetesPlatform, prometheus: str) -> None:
    via_prom = KubernetesPlatform(shop.workspace, prometheus=prometheus)
    for service in SERVICES:
        # discovered and scraped: every pod of the service answers through Prometheus too
        wait_until(lambda s=service: all(v for v in via_prom.request_counts(s).values()), 60,
                   f"Prometheus to scrape every pod of {service}")
    for service in SERVICES:
        before = shop.request_counts(service)
        time.sleep(2.5)  # every pod scraped at least once after `before` (1 s interval)
        counted = via_prom.request_counts(service)
        after = shop.request_counts(service)
        assert set(counted) == set(before) == set(after), (counted, before)
        for inst, by_status in counted.items():
            assert by_status is not None and before[inst] is not None and after[inst] is not None
            assert set(by_status) >= set(before[inst] or {}), (service, inst, by_status, before[inst])
            for status, n in by_status.items():
                low, high = (before[inst] or {}).get(status, 0.0), (after[inst] or {}).get(status, 0.0)
                assert low <= n <= high, f"{service} {inst} status {status}: proxy {low}..{high}, PromQL {n}"
        assert sum(sum((c or {}).values()) for c in counted.values()) > 0, f"no request to {service} counted"


def test_up_refuses_a_url_where_no_prometheus_answers(tmp_path: Path, kubeconfig: str,
                                                       core: client.CoreV1Api) -> None:
    name = ns_name("prom")
    url = f"http://127.0.0.1:{_free_port()}"
    proc = run_cli("up", "--platform", "kubernetes", "--namespace", name, "--kubeconfig", kubeconfig,
                   "--prometheus", url, cwd=REPO, env=cli_env(FAULTKIT_STATE_DIR=str(tmp_path / "state")), timeout=120)
    assert proc.returncode != 0
    assert f"Error: --prometheus {url}: no answer to a query" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert name not in {n.metadata.name for n in core.list_namespace().items}  # refused before anything was made
    assert not (tmp_path / "state" / "kubernetes" / "instance.json").exists()
