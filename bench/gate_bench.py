"""Time the real `faultkit gate` on a 700-entry catalog where a pull request changed one entry.

Builds a temporary git repository holding minishop's descriptor and manifests and a synthetic
catalog of valid config faults, commits it, changes one entry in a second commit, then runs
`faultkit gate --base HEAD~1 --no-validate` as a subprocess. Target: under 3 s.
Usage: python bench/gate_bench.py [--entries N] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import git
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from faultkit.apps.descriptor import load_descriptor  # noqa: E402
from faultkit.apps.manifests import find_container, get_field, load_manifests  # noqa: E402


def make_catalog(root: Path, entries: int) -> None:
    shutil.copy(REPO / "apps/minishop/app.yaml", root / "apps/minishop/app.yaml")
    shutil.copytree(REPO / "apps/minishop/manifests", root / "apps/minishop/manifests")
    app = load_descriptor(root / "apps/minishop/app.yaml")
    docs = load_manifests(app.manifests_dir)
    limits = []
    for s in app.services:
        memory = get_field(find_container(docs, s.workload, s.containers[0]), "resources.limits.memory")
        if memory:
            limits.append((s, memory))
    out = root / "catalog/minishop"
    out.mkdir(parents=True)
    for k in range(entries):
        s, memory = limits[k % len(limits)]
        entry = {
            "schema": "faultkit/v1",
            "id": f"ms-bench-{k:04d}",
            "app": "minishop",
            "title": f"Memory limit lowered {k}",
            "mechanism": "config",
            "category": "deployment",
            "level": "service",
            "target": {"service": s.name, "workload": s.workload, "container": s.containers[0]},
            "scope": [s.name],
            "artifact": {
                "kind": "manifest-field",
                "ref": f"Deployment/{s.workload}/{s.containers[0]}/resources.limits.memory",
            },
            "probe": {"service": app.entry, "path": "/"},
            "artifact_check": {
                "kind": "setting",
                "workload": s.workload,
                "container": s.containers[0],
                "field": "resources.limits.memory",
                "value": memory,
            },
            "config": {
                "workload": s.workload,
                "container": s.containers[0],
                "field": "resources.limits.memory",
                "old": memory,
                "new": f"{k + 1}Ki",
                "kind": "resource-limit",
            },
            "log": {"message": "process restarted", "service": s.name},
            "effect": "oom-restart",
            "evidence": {"metrics": ["restarts"]},
            "recovery": "Restore the memory limit and roll out.",
        }
        (out / f"ms-bench-{k:04d}.yaml").write_text(yaml.safe_dump(entry, sort_keys=False))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=700)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="faultkit-gate-bench-") as tmp:
        root = Path(tmp) / "repo"
        (root / "apps/minishop").mkdir(parents=True)
        make_catalog(root, args.entries)
        repo = git.Repo.init(root)
        with repo.config_writer() as c:
            c.set_value("user", "name", "bench").set_value("user", "email", "bench@example.com")
        repo.git.add(A=True)
        repo.index.commit("catalog")
        changed = root / "catalog/minishop/ms-bench-0042.yaml"
        changed.write_text(changed.read_text().replace("Memory limit lowered 42", "Memory limit reduced 42"))
        repo.git.add(A=True)
        repo.index.commit("one entry changed")
        env = {**os.environ, "PYTHONPATH": str(REPO), "FAULTKIT_STATE_DIR": str(Path(tmp) / "state")}
        env.pop("FAULTKIT_ROOT", None)
        times, cpu = [], []
        for _ in range(args.runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "faultkit.cli", "gate", "--base", "HEAD~1", "--no-validate"],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
            )
            times.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if proc.returncode != 0:
                print(proc.stdout + proc.stderr, file=sys.stderr)
                return 1
    best, median = min(times), statistics.median(times)
    verdict = "ok" if median < 3.0 else "SLOW"
    print(
        f"gate: {args.entries} entries, 1 changed: median {median:.2f} s, best {best:.2f} s "
        f"over {args.runs} runs, CPU {statistics.median(cpu):.2f} s (target < 3 s) {verdict}"
    )
    return 0 if median < 3.0 else 1


if __name__ == "__main__":
    sys.exit(main())
