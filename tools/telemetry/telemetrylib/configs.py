"""What `up` writes into the state folder and the command lines it starts."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

import yaml

from .layout import HOST, JAEGER_CONFIG, Layout

SCRAPE_INTERVAL = "1s"
RETENTION = "2d"


def prometheus_yaml(layout: Layout) -> str:
    config = {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL},
        # Empty for now: the alerts issue drops its rule pack here; `POST /-/reload` (or SIGHUP) reads it.
        "rule_files": [str(layout.rules / "*.yml"), str(layout.rules / "*.yaml")],
        "scrape_configs": [{
            "job_name": "otel-collector",
            # The exporter's own job/instance labels (service.namespace/service.name, service.instance.id)
            # are kept, as the OpenTelemetry-to-Prometheus conventions expect.
            "honor_labels": True,
            "static_configs": [{"targets": [f"{HOST}:{layout.ports['metrics']}"]}],
        }],
    }
    return yaml.safe_dump(config, sort_keys=False)


def write(layout: Layout) -> None:
    for folder in (layout.state, layout.logs, layout.run, layout.rules, layout.tsdb):
        folder.mkdir(parents=True, exist_ok=True)
    layout.prometheus_config.write_text(prometheus_yaml(layout))
    layout.ports_file.write_text("".join(f"{port_variable(name)}={port}\n" for name, port in layout.ports.items()))


def port_variable(name: str) -> str:
    return f"FAULTKIT_TELEMETRY_{name.upper()}_PORT"


def jaeger_env(layout: Layout, environ: Mapping[str, str]) -> dict[str, str]:
    env = {key: value for key, value in environ.items() if not key.startswith("OTEL_")}
    env.update({port_variable(name): str(port) for name, port in layout.ports.items()})
    env["FAULTKIT_TELEMETRY_HOST"] = HOST
    return env


def jaeger_command(layout: Layout) -> list[str]:
    return [str(layout.jaeger), "--config", f"file:{JAEGER_CONFIG}"]


def prometheus_binary() -> str:
    found = shutil.which("prometheus") or ("/usr/bin/prometheus" if os.access("/usr/bin/prometheus", os.X_OK) else "")
    if not found:
        raise FileNotFoundError("no prometheus on PATH; install Debian's package `prometheus`")
    return found


def prometheus_command(layout: Layout) -> list[str]:
    return [prometheus_binary(),
            f"--config.file={layout.prometheus_config}",
            f"--storage.tsdb.path={layout.tsdb}",
            f"--storage.tsdb.retention.time={RETENTION}",
            f"--web.listen-address={HOST}:{layout.ports['prometheus']}",
            "--web.enable-lifecycle"]


def promtool_check(layout: Layout) -> list[str]:
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    return [promtool, "check", "config", str(layout.prometheus_config)]
