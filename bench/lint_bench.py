"""Lint a synthetic 1,000-entry catalog over a 40-service descriptor with the real command.

Prints entries per second. Target: the 1,000-entry lint in under 2 s on a 2-core machine.
Usage: python bench/lint_bench.py [--entries N] [--services N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml


def make_workspace(root: Path, services: int, entries: int) -> None:
    names = [f"svc{i:02d}" for i in range(services)]
    app = {
        "schema": "faultkit/app/v1",
        "name": "bench",
        "version": "1",
        "entry": names[0],
        "manifests": "manifests",
        "source": "src",
        "services": [
            {
                "name": n,
                "workload": {"kind": "Deployment", "name": n},
                "containers": [n],
                "ports": [{"name": "http", "port": 8000 + i}],
                "source": n,
            }
            for i, n in enumerate(names)
        ],
        # a chain with fan-out, so scopes are non-trivial
        "edges": [[names[i // 2], names[i]] for i in range(1, services)],
    }
    (root / "apps/bench/manifests").mkdir(parents=True)
    (root / "apps/bench/app.yaml").write_text(yaml.safe_dump(app))
    docs = []
    for i, n in enumerate(names):
        env = [{"name": "PORT", "value": str(8000 + i)}]
        env += [
            {"name": f"DEP{j}_ADDR", "value": f"svc{j:02d}:{8000 + j}"} for j in range(services) if j // 2 == i and j
        ]
        docs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": n},
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": n,
                                    "image": f"bench/{n}:1",
                                    "env": env,
                                    "resources": {"limits": {"memory": "256Mi", "cpu": "500m"}},
                                }
                            ]
                        }
                    }
                },
            }
        )
    (root / "apps/bench/manifests/all.yaml").write_text(yaml.safe_dump_all(docs))
    out = root / "catalog/bench"
    out.mkdir(parents=True)
    for k in range(entries):
        i = k % services
        svc = names[i]
        scope = [svc] + ([names[i // 2]] if i else [])
        entry = {
            "schema": "faultkit/v1",
            "id": f"bench-{k:04d}",
            "app": "bench",
            "title": f"Memory limit {k}",
            "mechanism": "config",
            "category": "deployment",
            "level": "service",
            "target": {"service": svc, "workload": svc, "container": svc},
            "scope": scope,
            "artifact": {"kind": "manifest-field", "ref": f"Deployment/{svc}/{svc}/resources.limits.memory"},
            "probe": {"service": names[0], "path": "/"},
            "artifact_check": {
                "kind": "setting",
                "workload": svc,
                "container": svc,
                "field": "resources.limits.memory",
                "value": "256Mi",
            },
            "config": {
                "workload": svc,
                "container": svc,
                "field": "resources.limits.memory",
                "old": "256Mi",
                "new": f"{k + 1}Ki",
                "kind": "resource-limit",
            },
            "log": {"message": "process restarted", "service": svc},
            "effect": "oom-restart",
            "evidence": {"metrics": ["restarts"]},
            "recovery": "Restore the memory limit.",
        }
        (out / f"bench-{k:04d}.yaml").write_text(yaml.safe_dump(entry, sort_keys=False))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--services", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_workspace(root, args.services, args.entries)
        env = {**os.environ, "FAULTKIT_ROOT": str(root)}
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "faultkit.cli", "catalog", "lint"], env=env, capture_output=True, text=True
            )
            best = min(best, time.perf_counter() - start)
            if proc.returncode != 0:
                sys.exit(f"lint failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        print(f"entries: {args.entries}  services: {args.services}")
        print(f"lint wall time (best of 3, whole process): {best:.2f} s  (target < 2 s)")
        print(f"entries per second: {args.entries / best:.0f}")


if __name__ == "__main__":
    main()
