"""Alerts per window (faultkit/observe/alerts.py) read from a real Prometheus evaluating a real
rule file: one alert that fires at once, one held pending by its `for`; and `validate --alerts` on
the fake platform recording them in every window. minishop's own pack through the telemetry stack
is tests/telemetry/test_minishop_signals.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import yaml

from faultkit.errors import UsageError
from faultkit.observe.alerts import TIMEOUT_S, AlertWatch, WindowAlerts, check_url
from faultkit.observe.load import Limits
from faultkit.validators.params import ValidationParams
from faultkit.validators.pipeline import validate
from faultkit.workspace import Workspace
from tests.fakes.platform import FakePlatform
from tests.helpers import retrying
from tests.helpers.cli import run_cli
from tests.telemetry.conftest import free_ports
from tests.validators import shop
from tests.validators.test_trace_evidence import BEHAVIOURS, WINDOWS

RULES = {"groups": [{"name": "test", "interval": "1s", "rules": [
    {"alert": "AlwaysFiring", "expr": 'vector(1) > 0', "for": "0s", "labels": {"severity": "page"}},
    {"alert": "HeldPending", "expr": 'vector(1) > 0', "for": "1h"},
    {"alert": "InstanceFiring", "expr": 'vector(1) > 0', "labels": {"k8s_namespace_name": "shop-1"}},
    {"alert": "InstanceFiring", "expr": 'vector(1) > 0', "labels": {"k8s_namespace_name": "shop-2"}},
]}]}


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("the prometheus binary is missing: install Debian's `prometheus` package (.ci/run does)",
                    pytrace=False)
    tmp = tmp_path_factory.mktemp("alerting")
    (tmp / "rules.yaml").write_text(yaml.safe_dump(RULES))
    (tmp / "prometheus.yml").write_text(yaml.safe_dump({"global": {"evaluation_interval": "1s"},
                                                         "rule_files": [str(tmp / "rules.yaml")]}))
    port = free_ports(1)[0]
    proc = subprocess.Popen([binary, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=(tmp / "log").open("w"))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not _ready(url):
            assert proc.poll() is None, (tmp / "log").read_text()[-2000:]
            assert time.monotonic() < deadline, "Prometheus did not answer in 60 s"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _ready(url: str) -> bool:
    try:
        return requests.get(f"{url}/-/ready", timeout=1).status_code == 200
    except requests.RequestException:
        return False


def _watched(watch: AlertWatch) -> WindowAlerts:
    """A window of `watch` once it has seen AlwaysFiring firing and HeldPending pending (30 s at most)."""
    deadline = time.monotonic() + 30
    while True:
        watch.poll(time.time())
        states = {(a["alert"], a["state"]) for a in watch.seen.values()}
        if {("AlwaysFiring", "firing"), ("HeldPending", "pending")} <= states or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    watch.poll(time.time())
    return watch.take()


@pytest.mark.live
def test_a_window_records_firing_and_pending_alerts_once_each(prometheus: str) -> None:
    watch = AlertWatch(prometheus + "/")
    window = _watched(watch)
    assert window["source"] == prometheus and window["failed_polls"] == 0 and window["polls"] >= 2
    assert "scope" not in window
    assert [(a["alert"], a["state"], a["labels"]) for a in window["alerts"]] == [
        ("AlwaysFiring", "firing", {"severity": "page"}), ("HeldPending", "pending", {}),
        ("InstanceFiring", "firing", {"k8s_namespace_name": "shop-1"}),
        ("InstanceFiring", "firing", {"k8s_namespace_name": "shop-2"})]
    firing = window["alerts"][0]
    # a sample's time is taken as its poll goes out, and Prometheus may evaluate the rule while the poll
    # waits for its answer (seen in CI: active 4 ms after the sample's time), so within the poll's timeout
    assert firing["active_at"] is not None and firing["active_at"] <= firing["first_seen"] + TIMEOUT_S
    assert firing["first_seen"] <= firing["last_seen"]
    assert firing["firing_seen"] >= firing["first_seen"]
    assert "firing_seen" not in window["alerts"][1]
    assert watch.take()["alerts"] == [] and watch.polls == 0  # take() starts the next window afresh


@pytest.mark.live
def test_a_scoped_window_leaves_out_the_alerts_of_another_instance(prometheus: str) -> None:
    window = _watched(AlertWatch(prometheus, scope={"k8s_namespace_name": "shop-1"}))
    assert window["scope"] == {"k8s_namespace_name": "shop-1"}
    # an alert without the label (its rule sums it away) is any instance's, so it is kept
    assert [(a["alert"], a["labels"].get("k8s_namespace_name")) for a in window["alerts"]] == [
        ("AlwaysFiring", None), ("HeldPending", None), ("InstanceFiring", "shop-1")]


@pytest.mark.live
def test_an_app_in_two_sites_keeps_the_alerts_of_both_and_no_others(prometheus: str) -> None:
    window = _watched(AlertWatch(prometheus, scope={"k8s_namespace_name": "shop-1"},
                                 other_sites={"site-b": {"k8s_namespace_name": "shop-2"}}))
    assert window["scope"] == {"k8s_namespace_name": "shop-1"}
    assert window["other_sites"] == {"site-b": {"k8s_namespace_name": "shop-2"}}
    assert [(a["alert"], a["labels"].get("k8s_namespace_name")) for a in window["alerts"]] == [
        ("AlwaysFiring", None), ("HeldPending", None), ("InstanceFiring", "shop-1"), ("InstanceFiring", "shop-2")]
    # a site of its own in another namespace: shop-2's alert is another instance's again
    window = _watched(AlertWatch(prometheus, scope={"k8s_namespace_name": "shop-1"},
                                 other_sites={"site-b": {"k8s_namespace_name": "shop-3"}}))
    assert ("InstanceFiring", "shop-2") not in [(a["alert"], a["labels"].get("k8s_namespace_name"))
                                               for a in window["alerts"]]


def test_a_prometheus_that_does_not_answer_is_counted_not_raised() -> None:
    watch = AlertWatch(f"http://127.0.0.1:{free_ports(1)[0]}")
    watch.poll(time.time())
    watch.poll(time.time())
    window = watch.take()
    assert (window["polls"], window["failed_polls"], window["alerts"]) == (2, 2, [])
    assert window["error"].startswith("ConnectionError")


@pytest.mark.parametrize("url", ["k8s://telemetry/prometheus:9090", "prometheus:9090", "ftp://x"])
def test_only_an_http_url_is_read(url: str) -> None:
    with pytest.raises(UsageError, match="not an http"):
        check_url(url)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[Workspace, FakePlatform]]:
    ws = shop.make_workspace(tmp_path / "shop")
    platform = FakePlatform(ws, behaviours=BEHAVIOURS, scope={"k8s.namespace.name": "shop-1"})
    platform.up("minishop")
    yield ws, platform
    platform.down()


def _validate(running: tuple[Workspace, FakePlatform], alerts: str) -> tuple[dict[str, dict], Path]:
    ws, platform = running
    params = ValidationParams(window_s=2, interval_s=0.5, repeat=1, limits=Limits(max_load_per_core=1000),
                              alerts=alerts)
    verdict, folder = retrying.validate(ws, platform, shop.cart_store_port(ws), params, record=False)
    assert verdict["status"] in ("admitted", "rejected"), verdict["summary"]  # a verdict, whichever
    windows = {w.stem: json.loads(w.read_text()) for w in (folder / "windows").glob("*.json")}
    assert set(windows) == WINDOWS
    return windows, folder


@pytest.mark.live
def test_validate_records_in_each_window_the_alerts_seen_beside_its_samples(running, prometheus: str) -> None:
    windows, folder = _validate(running, prometheus)
    for name, window in windows.items():
        alerts = window["alerts"]
        assert alerts["source"] == prometheus and alerts["failed_polls"] == 0, name
        assert alerts["scope"] == {"k8s_namespace_name": "shop-1"}, name  # the platform's: shop-2's is left out
        # one poll beside each sample the window took (a lead sample, taken before the change, has none)
        assert alerts["polls"] in (len(window["samples"]), len(window["samples"]) - 1), name
        assert [(a["alert"], a["state"]) for a in alerts["alerts"]] == [
            ("AlwaysFiring", "firing"), ("HeldPending", "pending"), ("InstanceFiring", "firing")], name
        for a in alerts["alerts"]:  # seen inside this window, not carried over from the one before
            assert window["start"] - 0.01 <= a["first_seen"] <= a["last_seen"] <= window["end"] + 0.01, (name, a)
    # every alert was already there before the change: alert-raised is reported, not met
    verdict = json.loads((folder / "verdict.json").read_text())
    [raised] = [r for r in verdict["rules"] if r["rule"] == "alert-raised" and r["counted"]]
    assert (raised["passed"], raised["measured"]) == (False, 0) and "alert-raised" not in verdict["failed_rules"]
    ws, _ = running
    judged = json.loads(run_cli("judge", str(folder), "--json", cwd=ws.root, check=0).stdout)
    assert judged["matches_recorded"]


def test_a_prometheus_that_does_not_answer_leaves_failed_polls_in_each_window(running) -> None:
    windows, _ = _validate(running, f"http://127.0.0.1:{free_ports(1)[0]}")
    for name, window in windows.items():
        alerts = window["alerts"]
        assert alerts["polls"] == alerts["failed_polls"] > 0 and alerts["alerts"] == [], name
        assert alerts["error"].startswith("ConnectionError"), name


def test_a_run_given_no_prometheus_has_windows_without_alerts(running) -> None:
    windows, _ = _validate(running, "")
    assert not any("alerts" in w for w in windows.values())


def test_a_prometheus_in_a_cluster_is_refused_in_one_line_where_no_platform_reaches_it(cli, running) -> None:
    proc = cli("validate", "--fault", "t-any", "--alerts", "k8s://telemetry")
    assert proc.returncode == 2
    assert [line for line in proc.stderr.splitlines() if "k8s://" in line] == [
        "Error: --alerts k8s://telemetry: expected k8s://NAMESPACE/SERVICE:PORT"]
    ws, platform = running
    params = ValidationParams(window_s=2, interval_s=0.5, repeat=1, alerts="k8s://telemetry/prometheus:9090")
    with pytest.raises(UsageError, match=r"^--alerts 'k8s://telemetry/prometheus:9090': names a Service in a "
                                         r"cluster, which the fake platform cannot reach; give an http\(s\) URL"):
        validate(ws, platform, shop.cart_store_port(ws), params, record=False)
    assert not ws.evidence_dir.exists() or not any(ws.evidence_dir.iterdir())  # refused before a bundle was begun
