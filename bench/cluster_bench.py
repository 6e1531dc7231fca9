"""Figures of the one-node cluster of tools/cluster: build, up, idle cost, down.

Prints the cold build time (the figure recorded by the build that filled the cache, or a build
into a fresh cache with --cold), the warm build time (a second build: nothing to do), `up` to node
Ready, the whole cluster's CPU and memory while idle for --idle seconds (every component, every
containerd shim, every process in the pods' cgroups), and `down`. Needs root and the cluster down
(it starts and stops it).
Usage: python bench/cluster_bench.py [--cold] [--idle 60]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
CLUSTER = REPO / "tools" / "cluster" / "cluster"


def run(*args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    began = time.monotonic()
    done = subprocess.run([str(CLUSTER), *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"Error: cluster {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return time.monotonic() - began, done.stdout


def cluster_processes(cache: Path) -> list[psutil.Process]:
    pids: set[int] = set()
    for proc in psutil.process_iter(["exe"]):
        if (proc.info.get("exe") or "").startswith(str(cache) + "/"):
            pids.add(proc.pid)
    for procs_file in Path("/sys/fs/cgroup/memory/kubepods").rglob("cgroup.procs"):
        pids.update(int(pid) for pid in procs_file.read_text().split())
    found = []
    for pid in pids:
        try:
            found.append(psutil.Process(pid))
        except psutil.Error:
            pass
    return found


def cpu_seconds(procs: list[psutil.Process]) -> dict[int, float]:
    times = {}
    for proc in procs:
        try:
            cpu = proc.cpu_times()
            times[proc.pid] = cpu.user + cpu.system
        except psutil.Error:
            pass
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="build into a fresh cache (tens of minutes)")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of idle measurement")
    args = parser.parse_args()
    if subprocess.run([str(CLUSTER), "status"], capture_output=True).returncode == 0:
        sys.exit("Error: cluster_bench: the cluster is up; it measures up and down: run `cluster down` first")

    if args.cold:
        with tempfile.TemporaryDirectory(prefix="faultkit-cluster-cold-") as fresh:
            seconds, _ = run("build", env={**os.environ, "FAULTKIT_CLUSTER_CACHE": fresh})
        print(f"cold build (fresh cache):  {seconds:7.1f} s")
    warm, out = run("build")
    bin_dir = Path(out.strip().rsplit("-> ", 1)[1])
    record = bin_dir.parent / "build.json"
    if not args.cold:
        data = json.loads(record.read_text()) if record.is_file() else {}
        if data.get("from_empty_go_cache"):
            print(f"cold build (recorded):     {data['seconds']:7.1f} s")
        else:
            figure = f"{data['seconds']:.1f} s" if data else "none"
            print(f"cold build: the recorded build ({figure}) did not start from an empty Go cache; use --cold")
    print(f"warm build (cache hit):    {warm:7.1f} s")

    up, out = run("up")
    ready = re.search(r"node Ready after ([\d.]+) s; CoreDNS available after ([\d.]+) s", out)
    print(f"up (command, wall):        {up:7.1f} s")
    if ready:
        print(f"  node Ready after:        {float(ready.group(1)):7.1f} s")
        print(f"  CoreDNS available after: {float(ready.group(2)):7.1f} s")

    time.sleep(10)  # let start-up work (image GC, first syncs) settle before the idle window
    cache = bin_dir.parent.parent
    procs = cluster_processes(cache)
    before = cpu_seconds(procs)
    time.sleep(args.idle)
    after = cpu_seconds(procs)
    used = sum(after[pid] - before[pid] for pid in after if pid in before)
    rss = 0
    for proc in procs:
        try:
            rss += proc.memory_info().rss
        except psutil.Error:
            pass
    print(f"idle CPU over {args.idle:.0f} s:        {100 * used / args.idle:7.1f} % of one core "
          f"({len(procs)} processes)")
    print(f"idle memory (RSS sum):     {rss / 2**20:7.0f} MiB")

    down, _ = run("down")
    print(f"down:                      {down:7.1f} s")


if __name__ == "__main__":
    main()
