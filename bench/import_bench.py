"""Time `faultkit apps import` of generated manifests with many services (issue 32).

Each generated service is a Deployment with a Service of its own name; service i calls service i+1
through an env address, and every tenth one reads a ConfigMap, so the import resolves real edges.
The import runs as the real command in a temporary catalog repository (`--dry-run`, nothing kept).
Usage: python bench/import_bench.py [--sizes 1000,3000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent


def manifests(n: int) -> list[dict[str, Any]]:
    """n Deployments and their Services, a chain of calls svc-0 -> svc-1 -> ... and a few ConfigMaps."""
    docs: list[dict[str, Any]] = []
    for i in range(n):
        name = f"svc-{i}"
        env = [{"name": "NEXT_ADDR", "value": f"svc-{i + 1}:8080"}] if i + 1 < n else []
        container: dict[str, Any] = {"name": "main", "image": f"example/{name}:1.2.3", "env": env,
                                     "ports": [{"containerPort": 8080}]}
        if i % 10 == 0:
            docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-config"},
                         "data": {"DB_HOST": f"svc-{(i + 2) % n}"}})
            container["envFrom"] = [{"configMapRef": {"name": f"{name}-config"}}]
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                     "spec": {"selector": {"matchLabels": {"app": name}},
                              "template": {"metadata": {"labels": {"app": name}},
                                           "spec": {"containers": [container]}}}})
        docs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                     "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 8080}]}})
    return docs


def time_import(n: int, folder: Path) -> float:
    path = folder / f"services-{n}.yaml"
    path.write_text(yaml.safe_dump_all(manifests(n), sort_keys=False))
    env = {**os.environ, "PYTHONPATH": str(REPO), "FAULTKIT_ROOT": str(folder)}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "faultkit.cli", "apps", "import", "--name", "bench", "--dry-run",
                           str(path)], capture_output=True, text=True, env=env, cwd=folder, timeout=600)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"import of {n} services failed: {proc.stderr.strip()}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,3000", help="comma-separated service counts")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "apps").mkdir()
        figures = {n: time_import(n, folder) for n in sizes}
    if args.json:
        print(json.dumps({"import_seconds": {str(n): round(s, 2) for n, s in figures.items()}}))
    else:
        for n, s in figures.items():
            print(f"apps import of {n} services: {s:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
