"""Benchmark one minishop service's start time and request throughput (shoplib's per-request cost).

    python bench/shoplib_bench.py [--service productcatalog] [--path /products] [--seconds 5] [--clients 4]
                                  [--src OTHER_CHECKOUT/apps/minishop/src]

`--src` measures another checkout's minishop (say, before a change) on the same machine, for a pair
of figures taken under the same load.

Lays the service out as its build does (the service folder with shoplib/ beside main.py), starts it
with this Python, times the wait from spawn to the first 200 from /healthz (interpreter, imports and
the telemetry set-up), then has `clients` threads with kept-alive connections request `path` for
`seconds` and prints the requests per second. Repeats the start three times and prints the median.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

SRC = Path(__file__).resolve().parents[1] / "apps" / "minishop" / "src"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(build: Path, port: int) -> tuple[subprocess.Popen[bytes], float]:
    env = {**os.environ, "PORT": str(port)}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "main.py"], cwd=build, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while time.monotonic() - t0 < 30:
        try:
            if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200:
                return proc, time.monotonic() - t0
        except requests.RequestException:
            time.sleep(0.01)
    proc.kill()
    raise SystemExit("the service did not answer /healthz within 30 s")


def throughput(url: str, seconds: float, clients: int) -> float:
    done = [0] * clients
    stop = time.monotonic() + seconds

    def run(i: int) -> None:
        with requests.Session() as s:
            while time.monotonic() < stop:
                s.get(url, timeout=5)
                done[i] += 1

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done) / seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--service", default="productcatalog")
    ap.add_argument("--path", default="/products")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--src", type=Path, default=SRC)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build = Path(tmp) / args.service
        shutil.copytree(args.src / args.service, build, ignore=shutil.ignore_patterns("tests", "__pycache__"))
        shutil.copytree(args.src / "shoplib", build / "shoplib", ignore=shutil.ignore_patterns("tests", "__pycache__"))
        starts = []
        for _ in range(3):
            port = free_port()
            proc, took = start(build, port)
            starts.append(took)
            proc.terminate()
            proc.wait(10)
        port = free_port()
        proc, _ = start(build, port)
        try:
            rps = throughput(f"http://127.0.0.1:{port}{args.path}", args.seconds, args.clients)
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"{args.service}: start {statistics.median(starts) * 1000:.0f} ms (median of 3), "
          f"{rps:.0f} requests/s over {args.seconds:.0f} s with {args.clients} clients on {args.path}")


if __name__ == "__main__":
    main()
