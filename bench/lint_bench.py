"""Lint a synthetic 1,000-entry catalog over a 40-service descriptor with the real command.

Each figure is the real `faultkit catalog lint` as a subprocess, best and median of --runs, all in
one run so that they share the machine's load: uncached (`--no-cache`, the command as it was before
the cache), cold cache (the cache folder removed before each run), warm cache, and one file changed
(a warm cache, then one entry edited). Ratios are against the uncached median of the same run.
--compare REV adds the command as it was at commit REV (e.g. the commit before the cache).
Targets (issue 20): cold < 1.0 s, warm < 0.5 s, one file changed < 0.5 s.
Usage: python bench/lint_bench.py [--entries N] [--services N] [--runs N] [--compare REV]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from io import BytesIO
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
CACHE = ".faultkit_cache"


def bench_env(package_root: Path, **extra: str) -> dict[str, str]:
    """The environment a user has: this package on the path, byte-code cached as usual."""
    env = {**os.environ, "PYTHONPATH": str(package_root), **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's faultkit has .pyc files; do not time compiling
    env.pop("FAULTKIT_CACHE_DIR", None)
    return env


def timed(command: Sequence[str], cwd: Path, env: Mapping[str, str], runs: int, before: Callable[[int], None],
          ok: Sequence[int] = (0,)) -> list[float]:
    """Wall time of `command` over `runs` runs, calling before(run) untimed ahead of each."""
    times = []
    for run in range(runs):
        before(run)
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=cwd, env=dict(env), capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode not in ok:
            sys.exit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return times


def package_at(rev: str, into: Path) -> Path:
    """faultkit/ as it was at commit `rev`, extracted under `into` (for --compare)."""
    data = subprocess.run(["git", "archive", rev, "faultkit"], cwd=REPO, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def table(rows: list[tuple[str, list[float], float | None]], reference: float) -> str:
    """A Markdown table: figure, best, median, ratio to the reference median, target."""
    out = ["| figure | best s | median s | ratio to uncached | target |", "|---|---|---|---|---|"]
    for name, times, target in rows:
        median = statistics.median(times)
        mark = "" if target is None else f"< {target:.1f} s " + ("ok" if median < target else "SLOW")
        out.append(f"| {name} | {min(times):.3f} | {median:.3f} | {median / reference:.2f} | {mark} |")
    return "\n".join(out)


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
                "new": f"{6144 + k + 1}Ki",
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
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--compare", metavar="REV", help="also time the command as it was at this commit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="faultkit-lint-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        make_workspace(root, args.services, args.entries)
        # a catalog's files are not all written in the last two seconds: the cache trusts a file's status
        # only once it has settled (lint_cache.SETTLED_NS), so let the new files settle, untimed
        time.sleep(2.1)
        env = bench_env(REPO, FAULTKIT_ROOT=str(root))
        lint = [sys.executable, "-m", "faultkit.cli", "catalog", "lint"]
        cache = root / CACHE
        snapshot = Path(tmp) / "warm-cache"
        changed = root / "catalog/bench/bench-0500.yaml"
        original = changed.read_text()

        def clear(_: int) -> None:
            shutil.rmtree(cache, ignore_errors=True)

        def edit(run: int) -> None:  # the warm cache of the unedited catalog, then one entry edited
            shutil.rmtree(cache, ignore_errors=True)
            shutil.copytree(snapshot, cache)
            changed.write_text(original.replace("Memory limit 500", f"Memory limit 500, edit {run}"))

        timed(lint, root, env, 1, clear)  # byte-code compiled, and the cache warmed, untimed
        shutil.copytree(cache, snapshot)
        rows: list[tuple[str, list[float], float | None]] = []
        if args.compare:
            old = package_at(args.compare, Path(tmp) / "old")
            old_env = bench_env(old, FAULTKIT_ROOT=str(root))
            timed(lint, root, old_env, 1, clear)
            rows.append((f"cold, as at {args.compare}", timed(lint, root, old_env, args.runs, clear), None))
        uncached = timed([*lint, "--no-cache"], root, env, args.runs, clear)
        rows.append(("uncached (--no-cache)", uncached, None))
        rows.append(("cold cache", timed(lint, root, env, args.runs, clear), 1.0))
        rows.append(("warm cache", timed(lint, root, env, args.runs, lambda run: None), 0.5))
        rows.append(("one file changed", timed(lint, root, env, args.runs, edit), 0.5))
        print(f"lint: {args.entries} entries, {args.services} services, {args.runs} runs each, whole process")
        print(table(rows, statistics.median(uncached)))


if __name__ == "__main__":
    main()
