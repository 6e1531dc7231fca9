"""Figures of the telemetry stack of tools/telemetry: Jaeger's build, `up`, idle cost, `down`.

Prints the build time of Jaeger v2 (with --cold: into a fresh binary cache with an empty Go build
cache, modules still from Go's module cache; then into a fresh binary cache with Go's build cache as
it is; always: a build the cache already holds), `up` to every endpoint answering, each process's
CPU (% of one core) and resident memory while idle for --idle seconds, and `down`. The stack it
measures runs on free loopback ports with a state folder of its own, so a running stack is left alone.
Usage: python bench/telemetry_bench.py [--cold] [--idle 30]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
TELEMETRY = REPO / "tools" / "telemetry" / "telemetry"
PORTS = ("OTLP_GRPC", "OTLP_HTTP", "JAEGER_QUERY", "JAEGER_QUERY_GRPC", "METRICS", "COLLECTOR_TELEMETRY", "PROMETHEUS")


def run(*args: str, env: dict[str, str]) -> tuple[float, str]:
    began = time.monotonic()
    done = subprocess.run([sys.executable, str(TELEMETRY), *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"Error: telemetry {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return time.monotonic() - began, done.stdout


def free_ports(count: int) -> list[int]:
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]


def builds(cold: bool) -> None:
    if cold:
        for label, gocache in (("cold build (empty GOCACHE)", True), ("build, GOCACHE warm", False)):
            with tempfile.TemporaryDirectory(prefix="faultkit-telemetry-bench-") as fresh:
                env = {**os.environ, "FAULTKIT_TELEMETRY_CACHE": str(Path(fresh) / "cache")}
                if gocache:
                    env["GOCACHE"] = str(Path(fresh) / "gocache")
                seconds, _ = run("build", env=env)
            print(f"{label + ':':<32}{seconds:8.1f} s")
    seconds, _ = run("build", env=dict(os.environ))
    print(f"{'build, already cached:':<32}{seconds:8.1f} s")


def idle(env: dict[str, str], seconds: float) -> None:
    status = json.loads(run("status", "--json", env=env)[1])
    procs = {name: psutil.Process(pid) for name, pid in status["processes"].items()}
    time.sleep(5)  # past start-up work (Prometheus' first compaction checks, the first scrapes)
    before = {name: sum(proc.cpu_times()[:2]) for name, proc in procs.items()}
    time.sleep(seconds)
    total_cpu = total_rss = 0.0
    for name, proc in procs.items():
        cpu = (sum(proc.cpu_times()[:2]) - before[name]) / seconds * 100
        rss = proc.memory_info().rss / 2**20
        total_cpu, total_rss = total_cpu + cpu, total_rss + rss
        print(f"idle {name + ':':<27}{cpu:8.2f} % of one core, {rss:6.1f} MiB RSS")
    print(f"{'idle, whole stack:':<32}{total_cpu:8.2f} % of one core, {total_rss:6.1f} MiB RSS ({seconds:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cold", action="store_true", help="also build with an empty Go build cache (minutes)")
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of idle measurement")
    args = parser.parse_args()
    builds(args.cold)
    with tempfile.TemporaryDirectory(prefix="faultkit-telemetry-bench-state-") as state:
        env = {**os.environ, "FAULTKIT_TELEMETRY_STATE": state}
        env.update({f"FAULTKIT_TELEMETRY_{name}_PORT": str(port)
                    for name, port in zip(PORTS, free_ports(len(PORTS)), strict=True)})
        try:
            seconds, _ = run("up", env=env)
            print(f"{'up (cached binary):':<32}{seconds:8.1f} s")
            idle(env, args.idle)
        finally:
            seconds, _ = run("down", env=env)
            print(f"{'down:':<32}{seconds:8.1f} s")


if __name__ == "__main__":
    main()
