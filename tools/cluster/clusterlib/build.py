"""Build every binary of the cluster from the pinned Go modules into a cache folder keyed by version.

A second build with the same key finds every binary in place and builds nothing. Go's module and
build caches live in the same cache folder, outside the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .layout import GO_DIR, VERSIONS, Layout, cache_key


@dataclass(frozen=True)
class Module:
    folder: str  # under tools/cluster/go/
    packages: tuple[str, ...]
    outputs: tuple[str, ...]
    ldflags: str = ""
    tags: str = ""


def _k8s_ldflags() -> str:
    version = VERSIONS["kubernetes"]
    major, minor = version.lstrip("v").split(".")[:2]
    sets = {
        "k8s.io/component-base/version.gitVersion": version,
        "k8s.io/component-base/version.gitMajor": major,
        "k8s.io/component-base/version.gitMinor": minor,
        "k8s.io/component-base/version.gitTreeState": "clean",
        "k8s.io/client-go/pkg/version.gitVersion": version,
    }
    return " ".join(f"-X {key}={value}" for key, value in sets.items())


MODULES = (
    Module("pause", (".",), ("pause",)),
    Module("testapp", (".",), ("testapp",)),
    Module("etcd", (".",), ("etcd",)),
    Module("coredns", (".",), ("coredns",)),
    Module("containerd",
           tuple(f"github.com/containerd/containerd/v2/cmd/{name}" for name in ("containerd", "ctr",
                                                                               "containerd-shim-runc-v2")),
           ("containerd", "ctr", "containerd-shim-runc-v2"),
           ldflags=f"-X github.com/containerd/containerd/v2/version.Version={VERSIONS['containerd']}",
           # btrfs needs cgo headers, devmapper and zfs need their tools: the cluster uses overlayfs.
           tags="no_btrfs,no_devmapper,no_zfs"),
    Module("kube", ("./cmd/...",),
           ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "cri-reset"),
           ldflags=_k8s_ldflags()),
)


@dataclass(frozen=True)
class BuildResult:
    key: str
    bin: Path
    built: bool  # False: every binary was already in the cache
    seconds: float
    per_module: dict[str, float]


def go_env(layout: Layout) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "GOMODCACHE": str(layout.gomodcache),
        "GOCACHE": str(layout.gocache),
        # The machine is shared: two compile jobs at a time, and the build runs under nice.
        "GOFLAGS": "-p=2 -mod=readonly -trimpath",
        "CGO_ENABLED": "0",
        "GOTOOLCHAIN": "local",
    })
    return env


def missing(layout: Layout) -> list[str]:
    return [name for module in MODULES for name in module.outputs if not (layout.bin / name).is_file()]


def ensure_built(layout: Layout, log: bool = True) -> BuildResult:
    start = time.monotonic()
    if not missing(layout):
        return BuildResult(cache_key(), layout.bin, False, time.monotonic() - start, {})
    # A figure is a cold build's only when Go's build cache was empty when it began.
    from_empty_cache = not layout.gocache.is_dir() or not any(layout.gocache.iterdir())
    staging = layout.bin.with_name("bin.partial")
    staging.mkdir(parents=True, exist_ok=True)
    env = go_env(layout)
    per_module: dict[str, float] = {}
    for module in MODULES:
        if all((staging / name).is_file() for name in module.outputs):
            continue
        began = time.monotonic()
        argv = ["nice", "-n", "10", "go", "build", "-o", str(staging) + "/", "-ldflags", ("-s -w " + module.ldflags)]
        if module.tags:
            argv += ["-tags", module.tags]
        argv += list(module.packages)
        if log:
            print(f"build: {module.folder}: {' '.join(module.outputs)}", flush=True)
        subprocess.run(argv, cwd=GO_DIR / module.folder, env=env, check=True)
        per_module[module.folder] = round(time.monotonic() - began, 1)
    if layout.bin.exists():
        shutil.rmtree(layout.bin)
    staging.rename(layout.bin)
    seconds = time.monotonic() - start
    record = {"key": cache_key(), "seconds": round(seconds, 1), "from_empty_go_cache": from_empty_cache,
              "per_module": per_module,
              "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    (layout.bin.parent / "build.json").write_text(json.dumps(record, indent=2) + "\n")
    return BuildResult(cache_key(), layout.bin, True, seconds, per_module)


def recorded(layout: Layout) -> dict[str, object] | None:
    """The figures of the build that filled this cache key, if one did."""
    path = layout.bin.parent / "build.json"
    return json.loads(path.read_text()) if path.is_file() else None
