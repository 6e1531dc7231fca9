"""Pinned versions, loopback ports and the folders every other module of the tool agrees on."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

TOOL_DIR = Path(__file__).resolve().parent.parent
GO_DIR = TOOL_DIR / "go"
JAEGER_CONFIG = TOOL_DIR / "jaeger.yaml"

JAEGER_MODULE = "github.com/jaegertracing/jaeger"
JAEGER_VERSION = "v1.75.0"  # the module's tag; the same release is Jaeger v2.12.0
JAEGER_PACKAGE = f"{JAEGER_MODULE}/cmd/jaeger"
HOST = "127.0.0.1"

# Each port can be moved with FAULTKIT_TELEMETRY_<NAME>_PORT (tests pick free ones). The defaults sit
# beside the usual ones (4317, 4318, 16686, 9090) so a user's own stack on those keeps running.
DEFAULT_PORTS = {
    "otlp_grpc": 14317,  # OTLP/gRPC receiver
    "otlp_http": 14318,  # OTLP/HTTP receiver: OTEL_EXPORTER_OTLP_ENDPOINT
    "jaeger_query": 14686,  # Jaeger's query API (/api/services, /api/traces) and UI
    "jaeger_query_grpc": 14685,  # Jaeger's query API over gRPC
    "metrics": 14889,  # the collector's prometheus exporter: spanmetrics and OTLP metrics
    "collector_telemetry": 14888,  # the collector's own metrics (filtered span counts); not scraped
    "prometheus": 14090,  # Prometheus' HTTP API and UI
}

PROCESSES = ("jaeger", "prometheus")  # start order; `down` stops them in reverse


@dataclass(frozen=True)
class Layout:
    cache: Path  # outside the repository: built binaries, keyed by go.sum
    state: Path  # everything a running stack writes: pids, logs, Prometheus' TSDB, the rules folder
    ports: Mapping[str, int]
    binary: Path | None = None  # a jaeger built elsewhere (CI builds it in the background)

    @property
    def jaeger(self) -> Path:
        return self.binary or self.cache / cache_key() / "jaeger"

    @property
    def logs(self) -> Path:
        return self.state / "logs"

    @property
    def run(self) -> Path:
        return self.state / "run"

    @property
    def rules(self) -> Path:
        return self.state / "rules"

    @property
    def tsdb(self) -> Path:
        return self.state / "prometheus"

    @property
    def prometheus_config(self) -> Path:
        return self.state / "prometheus.yml"

    @property
    def ports_file(self) -> Path:
        return self.state / "ports.env"

    def url(self, name: str) -> str:
        return f"http://{HOST}:{self.ports[name]}"


def ports_from_env(env: Mapping[str, str]) -> dict[str, int]:
    ports = {}
    for name, default in DEFAULT_PORTS.items():
        variable = f"FAULTKIT_TELEMETRY_{name.upper()}_PORT"
        text = env.get(variable) or str(default)
        if not text.isdigit() or not 0 < int(text) < 65536:
            raise ValueError(f"{variable}={text!r} is not a port number (1-65535)")
        ports[name] = int(text)
    return ports


def layout_from_env(environ: Mapping[str, str] | None = None) -> Layout:
    env = os.environ if environ is None else environ
    cache_home = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = Path(env.get("FAULTKIT_TELEMETRY_CACHE") or cache_home / "faultkit-telemetry")
    state_home = Path(env.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    state = Path(env.get("FAULTKIT_TELEMETRY_STATE") or state_home / "faultkit-telemetry")
    binary = env.get("FAULTKIT_TELEMETRY_JAEGER")
    return Layout(cache=cache, state=state, ports=ports_from_env(env), binary=Path(binary) if binary else None)


def cache_key() -> str:
    """A digest of go.sum: it changes with any pinned module, so a new pin builds a new binary."""
    return hashlib.sha256((GO_DIR / "go.sum").read_bytes()).hexdigest()[:16]
