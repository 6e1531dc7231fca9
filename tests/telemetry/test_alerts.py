"""Alerts per window (faultkit/observe/alerts.py) read from a real Prometheus evaluating a real
rule file: one alert that fires at once, one held pending by its `for`."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest
import requests
import yaml

from faultkit.errors import UsageError
from faultkit.observe.alerts import AlertWatch, check_url

RULES = {"groups": [{"name": "test", "interval": "1s", "rules": [
    {"alert": "AlwaysFiring", "expr": 'vector(1) > 0', "for": "0s", "labels": {"severity": "page"}},
    {"alert": "HeldPending", "expr": 'vector(1) > 0', "for": "1h"},
]}]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    port = _free_port()
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


@pytest.mark.live
def test_a_window_records_firing_and_pending_alerts_once_each(prometheus: str) -> None:
    watch = AlertWatch(prometheus + "/")
    deadline = time.monotonic() + 30
    while True:
        watch.poll(time.time())
        states = {(a["alert"], a["state"]) for a in watch.seen.values()}
        if {("AlwaysFiring", "firing"), ("HeldPending", "pending")} <= states or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    watch.poll(time.time())
    window = watch.take()
    assert window["source"] == prometheus and window["failed_polls"] == 0 and window["polls"] >= 2
    assert [(a["alert"], a["state"], a["labels"]) for a in window["alerts"]] == [
        ("AlwaysFiring", "firing", {"severity": "page"}), ("HeldPending", "pending", {})]
    firing = window["alerts"][0]
    assert firing["active_at"] is not None and firing["active_at"] <= firing["first_seen"] <= firing["last_seen"]
    assert firing["firing_seen"] >= firing["first_seen"]
    assert "firing_seen" not in window["alerts"][1]
    assert watch.take()["alerts"] == [] and watch.polls == 0  # take() starts the next window afresh


def test_a_prometheus_that_does_not_answer_is_counted_not_raised() -> None:
    watch = AlertWatch(f"http://127.0.0.1:{_free_port()}")
    watch.poll(time.time())
    watch.poll(time.time())
    window = watch.take()
    assert (window["polls"], window["failed_polls"], window["alerts"]) == (2, 2, [])
    assert window["error"].startswith("ConnectionError")


@pytest.mark.parametrize("url", ["k8s://telemetry/prometheus:9090", "prometheus:9090", "ftp://x"])
def test_only_an_http_url_is_read(url: str) -> None:
    with pytest.raises(UsageError, match="not an http"):
        check_url(url)
