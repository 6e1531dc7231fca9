"""The telemetry stack of tools/telemetry, started by the tests on free loopback ports."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TELEMETRY = REPO / "tools" / "telemetry" / "telemetry"
PORT_NAMES = ("otlp_grpc", "otlp_http", "jaeger_query", "jaeger_query_grpc", "metrics", "collector_telemetry",
              "prometheus")


def telemetry(*args: str, env: Mapping[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TELEMETRY), *args], capture_output=True, text=True,
                          env=dict(env), timeout=timeout)


def free_ports(count: int) -> list[int]:
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]


def stack_env(state: Path, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """A stack of the test's own: its state folder and free ports, never the user's running one."""
    env = dict(environ)
    env["FAULTKIT_TELEMETRY_STATE"] = str(state)
    for name, port in zip(PORT_NAMES, free_ports(len(PORT_NAMES)), strict=True):
        env[f"FAULTKIT_TELEMETRY_{name.upper()}_PORT"] = str(port)
    return env


@dataclass(frozen=True)
class Stack:
    env: dict[str, str]  # what `telemetry` ran with
    exports: dict[str, str]  # what `telemetry env` printed
    state: Path

    @property
    def prometheus(self) -> str:
        return self.exports["FAULTKIT_PROMETHEUS"]

    @property
    def jaeger(self) -> str:
        return self.exports["FAULTKIT_JAEGER"]

    @property
    def collector_telemetry(self) -> str:
        return f"http://127.0.0.1:{self.env['FAULTKIT_TELEMETRY_COLLECTOR_TELEMETRY_PORT']}/metrics"


def parse_exports(text: str) -> dict[str, str]:
    pairs = (line.removeprefix("export ").split("=", 1) for line in text.splitlines() if line.startswith("export "))
    return {key: value for key, value in pairs}


@pytest.fixture(scope="module")
def telemetry_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    state = tmp_path_factory.mktemp("telemetry-state")
    env = stack_env(state)
    # A cold build of Jaeger takes many minutes: CI builds it beforehand (scripts/test.sh).
    started = telemetry("up", env=env, timeout=3600)
    if started.returncode != 0:
        telemetry("down", env=env)
        pytest.fail(f"telemetry up failed: {started.stderr.strip()}", pytrace=False)
    exports = telemetry("env", env=env)
    try:
        yield Stack(env, parse_exports(exports.stdout), state)
    finally:
        telemetry("down", env=env)
