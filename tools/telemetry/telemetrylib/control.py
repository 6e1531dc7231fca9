"""The `telemetry` subcommands' work: up, down, status, env. Each returns data; the CLI prints."""

from __future__ import annotations

import dataclasses
import errno
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import requests

from . import build, configs, procs
from .layout import HOST, PROCESSES, Layout


class TelemetryError(Exception):
    """A failure `telemetry` reports as one line and exit 1."""


@dataclass(frozen=True)
class Endpoint:
    process: str
    what: str
    url: str


@dataclass(frozen=True)
class Status:
    running: Mapping[str, int | None]  # process -> pid, None when not running
    endpoints: tuple[Endpoint, ...]

    @property
    def healthy(self) -> bool:
        return all(pid is not None for pid in self.running.values())


@dataclass(frozen=True)
class UpResult:
    build: build.BuildResult
    seconds: float  # from the first start to every endpoint answering


def endpoints(layout: Layout) -> tuple[Endpoint, ...]:
    return (
        Endpoint("jaeger", "OTLP/gRPC receiver", f"{HOST}:{layout.ports['otlp_grpc']}"),
        Endpoint("jaeger", "OTLP/HTTP receiver", layout.url("otlp_http")),
        Endpoint("jaeger", "Jaeger query API and UI", layout.url("jaeger_query")),
        Endpoint("jaeger", "prometheus exporter (scraped)", layout.url("metrics") + "/metrics"),
        Endpoint("jaeger", "collector's own metrics (not scraped)", layout.url("collector_telemetry") + "/metrics"),
        Endpoint("prometheus", "Prometheus HTTP API", layout.url("prometheus")),
    )


def running_layout(layout: Layout) -> Layout:
    """The layout with the ports the running (or last) stack was started on, when `up` recorded them."""
    if not layout.ports_file.is_file():
        return layout
    ports = dict(layout.ports)
    for line in layout.ports_file.read_text().splitlines():
        variable, _, value = line.partition("=")
        name = variable.removeprefix("FAULTKIT_TELEMETRY_").removesuffix("_PORT").lower()
        if name in ports and value.isdigit():
            ports[name] = int(value)
    return dataclasses.replace(layout, ports=ports)


def status(layout: Layout) -> Status:
    layout = running_layout(layout)
    return Status({name: procs.pid(layout, name) for name in PROCESSES}, endpoints(layout))


def env_lines(layout: Layout) -> list[str]:
    current = status(layout)
    if not current.healthy:
        raise TelemetryError("the stack is not running; start it with `tools/telemetry/telemetry up`")
    layout = running_layout(layout)
    return [f"export OTEL_EXPORTER_OTLP_ENDPOINT={layout.url('otlp_http')}",
            "export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
            f"export FAULTKIT_PROMETHEUS={layout.url('prometheus')}",
            f"export FAULTKIT_ALERTS={layout.url('prometheus')}",
            f"export FAULTKIT_JAEGER={layout.url('jaeger_query')}"]


def occupied_port(layout: Layout) -> str | None:
    """The first of the stack's ports something else listens on, named, or None."""
    for name, port in layout.ports.items():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            # As the servers themselves bind: a port in TIME_WAIT after `down` is free.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((HOST, port))
            except OSError as err:
                why = "in use" if err.errno == errno.EADDRINUSE else err.strerror
                return (f"port {port} ({name}) on {HOST} is {why}; set {configs.port_variable(name)} "
                        "to a free port or stop what holds it")
    return None


def up(layout: Layout, environ: Mapping[str, str], rule_packs: Mapping[str, str] | None = None) -> UpResult | None:
    """Build if needed, start Jaeger and Prometheus (with `rule_packs`, rules.packs' output, in its rules
    folder), wait until all answer; None when already up."""
    current = status(layout)
    if current.healthy:
        return None
    if any(pid is not None for pid in current.running.values()):
        dead = [name for name, pid in current.running.items() if pid is None]
        raise TelemetryError(f"the stack is partly up ({', '.join(dead)} not running); run "
                             "`tools/telemetry/telemetry down` first")
    for name in PROCESSES:  # records of a stack that died under us
        procs.stop(layout, name)
    problem = occupied_port(layout)
    if problem:
        raise TelemetryError(problem)
    built = build.ensure_built(layout, environ)
    configs.write(layout)
    for name, text in (rule_packs or {}).items():
        (layout.rules / name).write_text(text)
    check = subprocess.run(configs.promtool_check(layout), capture_output=True, text=True)
    if check.returncode != 0:
        raise TelemetryError(f"promtool rejects {layout.prometheus_config}: {_last_line(check.stdout + check.stderr)}")
    began = time.monotonic()
    try:
        procs.start(layout, "jaeger", configs.jaeger_command(layout), configs.jaeger_env(layout, environ))
        _wait(layout, "jaeger", "query API", layout.url("jaeger_query") + "/api/services", _ok)
        _wait(layout, "jaeger", "OTLP/HTTP receiver", layout.url("otlp_http") + "/v1/traces", _answers)
        procs.start(layout, "prometheus", configs.prometheus_command(layout), environ)
        _wait(layout, "prometheus", "readiness", layout.url("prometheus") + "/-/ready", _ok)
    except BaseException:
        for name in reversed(PROCESSES):
            procs.stop(layout, name)
        raise
    return UpResult(built, time.monotonic() - began)


def down(layout: Layout, keep: bool = False) -> tuple[list[str], list[str]]:
    """Stop every process `up` started; returns (what was stopped, what is left behind)."""
    layout = running_layout(layout)
    stopped = []
    for name in reversed(PROCESSES):
        if procs.pid(layout, name) is not None:
            stopped.append(name)
        procs.stop(layout, name)
    left = [f"{name} (pid {pid})" for name, pid in ((n, procs.pid(layout, n)) for n in PROCESSES) if pid]
    if not keep and not left:
        _remove_state(layout)
    return stopped, left


def _remove_state(layout: Layout) -> None:
    """Only what `up` made, so a state folder the user pointed elsewhere keeps anything else in it."""
    for folder in (layout.logs, layout.run, layout.rules, layout.tsdb):
        shutil.rmtree(folder, ignore_errors=True)
    for path in (layout.prometheus_config, layout.ports_file):
        path.unlink(missing_ok=True)
    try:
        layout.state.rmdir()
    except OSError:
        pass


def _ok(resp: requests.Response) -> bool:
    return resp.status_code == 200


def _answers(resp: requests.Response) -> bool:
    return resp.status_code < 500  # a GET on the OTLP path is 405: the receiver is listening


def _wait(layout: Layout, name: str, what: str, url: str, check: Callable[[requests.Response], bool],
          timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    log = procs.log_path(layout, name)
    while True:
        if procs.pid(layout, name) is None:
            raise TelemetryError(f"{name} exited during start-up ({_last_line(_tail(log))}); its log: {log}")
        try:
            if check(requests.get(url, timeout=2)):
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise TelemetryError(f"{name}'s {what} at {url} did not answer within {timeout:.0f} s; its log: {log}")
        time.sleep(0.25)


def _tail(path: Path) -> str:
    try:
        with open(path, errors="replace") as handle:
            return handle.read()[-4000:]
    except OSError:
        return ""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"
