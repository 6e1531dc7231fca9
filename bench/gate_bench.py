"""Time the real `faultkit gate` on a 700-entry catalog where a pull request changed one entry.

Builds a temporary git repository holding minishop's descriptor and manifests and a synthetic
catalog of valid config faults, commits it, changes one entry in a second commit, then runs
`faultkit gate --base HEAD~1 --no-validate` as a subprocess, best and median of --runs, in one run:
uncached (`--no-cache`), cold (no cache folder) and warm (the cache a lint of the base commit left,
restored before each run, so the changed entry is the one file read afresh). --compare REV adds
the command as it was at commit REV. Targets (issue 20): warm < 1.0 s, cold < 3.0 s.
Usage: python bench/gate_bench.py [--entries N] [--runs N] [--compare REV]
"""

from __future__ import annotations

import argparse
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

from lint_bench import CACHE, bench_env, package_at, table, timed  # noqa: E402

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
                "new": f"{6144 + k + 1}Ki",
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
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--compare", metavar="REV", help="also time the command as it was at this commit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="faultkit-gate-bench-") as tmp:
        root = Path(tmp) / "repo"
        (root / "apps/minishop").mkdir(parents=True)
        make_catalog(root, args.entries)
        # a catalog's files are not all written in the last two seconds: the cache trusts a file's status
        # only once it has settled (lint_cache.SETTLED_NS), so let the new files settle, untimed
        time.sleep(2.1)
        repo = git.Repo.init(root)
        with repo.config_writer() as c:
            c.set_value("user", "name", "bench").set_value("user", "email", "bench@example.com")
        repo.git.add(A=True)
        repo.index.commit("catalog")
        env = bench_env(REPO, FAULTKIT_STATE_DIR=str(Path(tmp) / "state"))
        env.pop("FAULTKIT_ROOT", None)
        # the cache as a lint of the base commit leaves it (what CI restores, or a maintainer has)
        subprocess.run([sys.executable, "-m", "faultkit.cli", "catalog", "lint"], cwd=root, env=env,
                       capture_output=True, check=True)
        snapshot = Path(tmp) / "base-cache"
        shutil.copytree(root / CACHE, snapshot)
        shutil.rmtree(root / CACHE)
        changed = root / "catalog/minishop/ms-bench-0042.yaml"
        changed.write_text(changed.read_text().replace("Memory limit lowered 42", "Memory limit reduced 42"))
        repo.git.add(A=True)
        repo.index.commit("one entry changed")
        gate = [sys.executable, "-m", "faultkit.cli", "gate", "--base", "HEAD~1", "--no-validate"]

        def clear(_: int) -> None:
            shutil.rmtree(root / CACHE, ignore_errors=True)

        def restore(_: int) -> None:
            clear(0)
            shutil.copytree(snapshot, root / CACHE)

        timed(gate, root, env, 1, clear)  # byte-code compiled, untimed
        rows: list[tuple[str, list[float], float | None]] = []
        if args.compare:
            old_env = {**env, "PYTHONPATH": str(package_at(args.compare, Path(tmp) / "old"))}
            timed(gate, root, old_env, 1, clear)
            rows.append((f"cold, as at {args.compare}", timed(gate, root, old_env, args.runs, clear), None))
        uncached = timed([*gate, "--no-cache"], root, env, args.runs, clear)
        rows.append(("uncached (--no-cache)", uncached, None))
        rows.append(("cold (no cache folder)", timed(gate, root, env, args.runs, clear), 3.0))
        warm = timed(gate, root, env, args.runs, restore)
        rows.append(("warm, 1 changed", warm, 1.0))
    print(f"gate: {args.entries} entries, 1 changed, {args.runs} runs each, whole process")
    print(table(rows, statistics.median(uncached)))
    return 0 if statistics.median(warm) < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
