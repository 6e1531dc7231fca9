"""Benchmark the local platform on minishop: time to ready, memory, and the shop's 5xx share.

    python bench/platform_bench.py --seconds 300 [--rps 20] [--replicas 1]

Brings minishop up in a private state folder, patches the load generator to LOAD_RPS (a rollout
of that workload), then scrapes the frontend's request counts (the count of OpenTelemetry's
http.server.request.duration) before and after a window and
prints the figures. Always tears down.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import psutil
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from faultkit.platforms.local import LocalPlatform  # noqa: E402
from faultkit.workspace import Workspace  # noqa: E402

SAMPLE = re.compile(r"^http_server_request_duration_seconds_count\{(?P<labels>[^}]*)\}\s+(?P<value>[0-9.eE+-]+)$")


def frontend_counts(p: LocalPlatform) -> tuple[float, float]:
    """(all requests, 5xx requests) summed over the frontend's instances."""
    total = errors = 0.0
    for url in p.instance_endpoints("frontend").values():
        for line in requests.get(url + "/metrics", timeout=10).text.splitlines():
            m = SAMPLE.match(line)
            if m:
                value = float(m["value"])
                total += value
                if re.search(r'http_response_status_code="5\d\d"', m["labels"]):
                    errors += value
    return total, errors


def total_rss_mib(p: LocalPlatform) -> float:
    rss = 0
    for pids in p.pids().values():
        for pid in pids:
            try:
                rss += psutil.Process(pid).memory_info().rss
            except psutil.Error:
                pass
    return rss / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="observation window (default 300)")
    parser.add_argument("--rps", type=int, default=20, help="load generator rate (default 20)")
    parser.add_argument("--replicas", type=int, default=0, help="instances per service (default: manifests)")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="faultkit-bench-") as state:
        p = LocalPlatform(Workspace(root=root, state_dir=Path(state)))
        try:
            started = time.time()
            p.up("minishop", replicas=args.replicas, timeout=120)
            ready_s = time.time() - started
            n = len(p.instances())
            patch_started = time.time()
            p.patch_field("loadgenerator", "loadgenerator", "env.LOAD_RPS", str(args.rps), timeout=60)
            patch_s = time.time() - patch_started
            time.sleep(5)  # let the new load settle before the window opens
            total0, err0 = frontend_counts(p)
            rss_before = total_rss_mib(p)
            time.sleep(args.seconds)
            total1, err1 = frontend_counts(p)
            rss_after = total_rss_mib(p)
            restarts = sum(i.restarts for i in p.instances())
            requests_n, errors_n = total1 - total0, err1 - err0
            print(f"instances                : {n}")
            print(f"up -> all ready          : {ready_s:.2f} s")
            print(f"patch LOAD_RPS rollout   : {patch_s:.2f} s")
            print(f"total RSS (start / end)  : {rss_before:.0f} MiB / {rss_after:.0f} MiB")
            print(f"window                   : {args.seconds:.0f} s at LOAD_RPS={args.rps}")
            print(f"frontend requests        : {requests_n:.0f} ({requests_n / args.seconds:.1f}/s)")
            share = errors_n / requests_n if requests_n else 0.0
            print(f"frontend 5xx             : {errors_n:.0f} ({share:.2%})")
            print(f"restarts during the run  : {restarts}")
        finally:
            down_started = time.time()
            p.down()
            print(f"down                     : {time.time() - down_started:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
