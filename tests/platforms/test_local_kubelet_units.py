"""The kubelet's pieces that need no running app: probe specs and checks, the prober, back-off, OOM sampling."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from faultkit.errors import InputError
from faultkit.platforms.local import memory
from faultkit.platforms.local.backoff import Backoff
from faultkit.platforms.local.deployed import Deployed
from faultkit.platforms.local.probes import (
    NOT_READY_WAIT_S,
    Exec,
    HttpGet,
    Prober,
    ProbeSpec,
    TcpSocket,
    check,
)

REPO = Path(__file__).resolve().parents[2]


# -- probe specs ----------------------------------------------------------------------------
def test_probe_spec_fills_the_kubernetes_defaults() -> None:
    spec = ProbeSpec.parse({"httpGet": {"port": "http"}}, "c: readinessProbe")
    assert spec == ProbeSpec(HttpGet(path="/", port="http"), 10.0, 1.0, 3, 0.0)
    assert ProbeSpec.parse(None, "c: livenessProbe") is None


def test_probe_spec_reads_every_field_and_handler() -> None:
    raw = {
        "httpGet": {"path": "/readyz", "port": 7070},
        "periodSeconds": 2,
        "timeoutSeconds": "0.5",
        "failureThreshold": 5,
        "initialDelaySeconds": 1.5,
    }
    assert ProbeSpec.parse(raw, "w") == ProbeSpec(HttpGet("/readyz", 7070), 2.0, 0.5, 5, 1.5)
    assert ProbeSpec.parse({"tcpSocket": {"port": 6379}}, "w") == ProbeSpec(TcpSocket(6379))
    assert ProbeSpec.parse({"exec": {"command": ["test", 1]}}, "w") == ProbeSpec(Exec(("test", "1")))
    # a kubelet looks for httpGet first; a probe without a handler always succeeds
    assert ProbeSpec.parse({"tcpSocket": {"port": 1}, "httpGet": {"port": 2}}, "w") == ProbeSpec(HttpGet("/", 2))
    assert ProbeSpec.parse({"periodSeconds": 3}, "w") == ProbeSpec(None, period_s=3.0)
    # a port that is neither a number nor a name maps, like an unknown name, to nothing listening
    assert ProbeSpec.parse({"tcpSocket": {"port": [1]}}, "w") == ProbeSpec(TcpSocket(None))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"httpGet": {"port": 80}, "periodSeconds": "often"},
            r"^c: readinessProbe\.periodSeconds: expected a number, got 'often'; fix the probe",
        ),
        (
            {"failureThreshold": None},
            r"^c: readinessProbe\.failureThreshold: expected a number, got None; fix the probe",
        ),
        ({"httpGet": "/readyz"}, r"^c: readinessProbe\.httpGet: expected a mapping, got '/readyz'; fix the probe"),
        ({"exec": {"command": []}}, r"^c: readinessProbe\.exec\.command: expected a non-empty list of strings"),
        ("httpGet", r"^c: readinessProbe: expected a mapping"),
    ],
)
def test_a_bad_probe_is_one_line_naming_the_field(raw: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        ProbeSpec.parse(raw, "c: readinessProbe")


def test_every_probe_of_minishop_parses(tmp_path: Path) -> None:
    deployed = Deployed.apply(REPO / "apps/minishop/manifests", tmp_path / "deployed")
    specs = [
        ProbeSpec.parse(raw, w)
        for w in deployed.workloads()
        for c in deployed.containers(w)
        for raw in (c.readiness, c.liveness)
        if raw is not None
    ]
    assert specs and all(isinstance(s, ProbeSpec) and s.action is not None for s in specs)
    assert {type(s.action) for s in specs if s is not None} >= {HttpGet, TcpSocket}


# -- one check against real listeners -------------------------------------------------------
class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response({"/ok": 200, "/moved": 302}.get(self.path, 500))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def health_port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_check_http_tcp_and_exec_against_real_listeners(health_port: int, tmp_path: Path) -> None:
    def port_of(port: int | str | None) -> int:
        return health_port if port == "http" else 1  # port 1: nothing listens

    def probe(raw: dict[str, object]) -> bool:
        spec = ProbeSpec.parse(raw, "c")
        assert spec is not None
        return check(spec, port_of, tmp_path, {"PATH": "/usr/bin:/bin"})

    assert probe({"httpGet": {"path": "/ok", "port": "http"}})
    assert probe({"httpGet": {"path": "/moved", "port": "http"}})  # 2xx and 3xx pass, as in Kubernetes
    assert not probe({"httpGet": {"path": "/broken", "port": "http"}})
    assert not probe({"httpGet": {"path": "/ok", "port": "other"}})
    assert probe({"tcpSocket": {"port": "http"}})
    assert not probe({"tcpSocket": {"port": 9}})
    (tmp_path / "ready").write_text("")
    assert probe({"exec": {"command": ["test", "-e", "ready"]}})  # runs in the container's folder
    assert not probe({"exec": {"command": ["test", "-e", "missing"]}})
    assert not probe({"exec": {"command": ["no-such-binary-here"]}})
    assert not probe({"exec": {"command": ["sleep", "5"]}, "timeoutSeconds": 0.2})
    assert probe({})


# -- the prober's state, on a clock of its own ----------------------------------------------
class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _prober(
    readiness: ProbeSpec | None, liveness: ProbeSpec | None, results: dict[str, list[bool]]
) -> tuple[Prober, _Clock, list[float]]:
    """A prober whose probes answer from `results` in turn and whose kills are recorded (when)."""
    clock = _Clock()
    kills: list[float] = []

    def probe(spec: ProbeSpec) -> bool:
        return results["ready" if spec is readiness else "live"].pop(0)

    return Prober(readiness, liveness, probe, lambda: kills.append(clock.now), clock), clock, kills


def test_readiness_waits_out_the_initial_delay_capped_and_fails_after_the_threshold() -> None:
    readiness = ProbeSpec(HttpGet("/", 80), period_s=2.0, failure_threshold=2, initial_delay_s=30.0)
    results = {"ready": [True, False, False, True]}
    prober, clock, _ = _prober(readiness, None, results)
    started = clock.now
    assert prober.tick(True, started, False) == NOT_READY_WAIT_S and not prober.ready  # inside the delay
    clock.now += 1.0  # the delay is capped at a second: readiness decides traffic, not life
    assert prober.tick(True, started, False) == 1.0 and prober.ready  # period 2 s, polled each second
    prober.tick(True, started, False)
    assert prober.ready  # one failure is below the threshold of 2
    prober.tick(True, started, False)
    assert not prober.ready
    prober.tick(True, started, False)
    assert prober.ready and not results["ready"]
    prober.tick(False, started, False)
    assert not prober.ready  # a dead process is not ready, without probing


def test_no_readiness_probe_means_ready_while_alive() -> None:
    prober, clock, _ = _prober(None, None, {})
    assert prober.tick(True, clock.now, False) == 1.0 and prober.ready
    prober.tick(False, clock.now, False)
    assert not prober.ready


def test_liveness_kills_after_threshold_failures_one_period_apart_and_pauses_while_suspended() -> None:
    liveness = ProbeSpec(TcpSocket(80), period_s=10.0, failure_threshold=3, initial_delay_s=5.0)
    results = {"live": [False, False, True, False, False, False]}
    prober, clock, kills = _prober(None, liveness, results)
    started = clock.now
    for _ in range(9):  # the first period has not passed: no probe yet
        prober.tick(True, started, False)
        clock.now += 1.0
    assert len(results["live"]) == 6
    clock.now = started + 10
    prober.tick(True, started, False)  # failure 1
    clock.now += 5
    prober.tick(True, started, False)  # too soon after the last probe: nothing
    clock.now += 5
    prober.tick(True, started, False)  # failure 2
    clock.now += 10
    prober.tick(True, started, False)  # success: the count starts over
    assert kills == [] and len(results["live"]) == 3
    clock.now += 10
    prober.tick(True, started, True)  # suspended (instance-failure): liveness pauses
    assert len(results["live"]) == 3
    for _ in range(3):
        prober.tick(True, started, False)
        clock.now += 10
    assert kills == [started + 60] and prober.live_failures == 0 and not results["live"]


# -- restart back-off -----------------------------------------------------------------------
def test_backoff_doubles_to_the_cap_and_resets_after_a_long_run() -> None:
    backoff = Backoff()
    assert [backoff.after_exit(1.0) for _ in range(7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert backoff.after_exit(29.9) == 10.0
    assert backoff.after_exit(30.0) == 0.5  # it ran 30 s: a fresh crash loop
    assert backoff.after_exit(0.1) == 1.0
    short = Backoff(start=1.0, cap=3.0, reset_after=5.0)
    assert [short.after_exit(0) for _ in range(4)] == [1.0, 2.0, 3.0, 3.0]
    assert short.after_exit(5.0) == 1.0


# -- memory sampling ------------------------------------------------------------------------
def test_memory_watch_reports_a_process_tree_over_its_limit(tmp_path: Path) -> None:
    hog = subprocess.Popen(
        [sys.executable, "-c", "import time; held = b'x' * (64 << 20); print('ok', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert hog.stdout is not None and hog.stdout.readline() == b"ok\n"
        seen: list[int] = []

        def over(rss: int) -> None:
            seen.append(rss)
            hog.kill()

        rc = memory.watch(hog, 32 << 20, lambda: [], threading.Event(), over, sample_s=0.05)
        assert rc == -9 and len(seen) == 1 and seen[0] > 64 << 20
    finally:
        hog.kill()
        hog.wait()


def test_memory_watch_without_a_limit_only_waits() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert memory.watch(proc, None, lambda: [], threading.Event(), lambda rss: pytest.fail("no limit"), 0.05) == 3
