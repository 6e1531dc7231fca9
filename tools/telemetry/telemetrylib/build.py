"""Build Jaeger v2 from the pinned Go module (tools/telemetry/go) into the cache, once per go.sum.

Modules come through the Go module proxy into Go's own module cache (GOFLAGS=-mod=mod, go.sum checks
them); Go's build cache is Go's own too unless GOCACHE says otherwise (bench --cold passes an empty one).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .layout import GO_DIR, JAEGER_PACKAGE, JAEGER_VERSION, Layout

VERSION_FLAGS = f"-X github.com/jaegertracing/jaeger/internal/version.latestVersion={JAEGER_VERSION}"


class BuildError(Exception):
    """The Go build failed; the message ends with the tail of its output."""


@dataclass(frozen=True)
class BuildResult:
    binary: Path
    built: bool  # False: the cache already held it
    seconds: float


def go_env(environ: Mapping[str, str]) -> dict[str, str]:
    # Go's defaults otherwise (cgo as the toolchain decides, no -trimpath): a cgo or trimpath setting
    # of its own keys every one of the ~2,300 packages apart, so a build cache that a plain
    # `go build` of this module filled would be of no use (measured: 1 of 2,325 packages stale with
    # the defaults, 1,637 with CGO_ENABLED=0 -trimpath).
    env = dict(environ)
    env.update({"GOFLAGS": "-mod=mod -buildvcs=false", "GOTOOLCHAIN": "local"})
    return env


def ensure_built(layout: Layout, environ: Mapping[str, str] | None = None) -> BuildResult:
    start = time.monotonic()
    target = layout.jaeger
    if target.is_file():
        return BuildResult(target, False, time.monotonic() - start)
    if layout.binary is not None:
        raise BuildError(f"FAULTKIT_TELEMETRY_JAEGER names {target}, which does not exist")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Two builds at once (CI's background build and a test) each write their own file; the last
    # os.replace wins and both files are whole.
    partial = target.with_name(f"jaeger.partial.{os.getpid()}")
    argv = ["nice", "-n", "10", "go", "build", "-ldflags", f"-s -w {VERSION_FLAGS}",
            "-o", str(partial), JAEGER_PACKAGE]
    env = go_env(os.environ if environ is None else environ)
    try:
        proc = subprocess.run(argv, cwd=GO_DIR, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
            raise BuildError(f"`go build {JAEGER_PACKAGE}` in {GO_DIR} exited {proc.returncode}: {tail}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return BuildResult(target, True, time.monotonic() - start)
