"""No-action runs of the light-5 and light-10 seed-1 schedules on minishop (local platform), with
short invocations: the degradation integral of each, and the clock's overhead per invocation (from
the boundary until every change is in place) by mechanism.

A throwaway workspace holds a copy of the shipped catalog, patches and release; the schedules are
exported from that release. Each run is judged again from its sealed record.
Usage: python bench/replay_bench.py [--interval 10s] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def faultkit(root: Path, *args: str) -> str:
    env = {**os.environ, "FAULTKIT_ROOT": str(root), "FAULTKIT_STATE_DIR": str(root / ".faultkit"),
           "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-m", "faultkit.cli", *args], cwd=root, env=env, capture_output=True,
                         text=True, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"faultkit {' '.join(args)} failed: {out.stderr.strip()[-2000:]}")
    return out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", default="10s")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="faultkit-replay-bench-") as tmp:
        root = Path(tmp)
        for folder in ("apps", "catalog", "patches", "dist"):
            shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
        faultkit(root, "up", "--app", "minishop")
        try:
            for preset in ("light-5", "light-10"):
                faultkit(root, "schedule", "export", "--app", "minishop", "--seed", "1", "--preset", preset)
                run = json.loads(faultkit(root, "schedule", "run", f"schedules/minishop-{preset}-seed1.json",
                                          "--interval", args.interval, "--json"))
                faultkit(root, "schedule", "judge", run["record"])
                figures[preset] = {"interval": args.interval, "degradation": run["degradation"],
                                   "overhead": run["overhead"]}
        finally:
            faultkit(root, "down")
    if args.json:
        print(json.dumps(figures, indent=2, sort_keys=True))
        return
    for preset, f in figures.items():
        d, o = f["degradation"], f["overhead"]
        print(f"{preset} (no action, {f['interval']} invocations): degradation {d['integral']:.1f} degraded "
              f"requests of {d['requests']:.0f}; clock overhead {o['mean_with_changes_s']:.2f} s per boundary "
              "with changes")
        for mechanism, m in o["by_mechanism"].items():
            print(f"  {mechanism:<16} mean {m['mean_s']:.2f} s  max {m['max_s']:.2f} s  (n={m['n']})")


if __name__ == "__main__":
    main()
