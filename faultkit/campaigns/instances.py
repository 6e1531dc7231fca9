"""The app instances a campaign validates on, each driven through the `faultkit` command itself.

An instance is a state folder (DIR/instances/<n>/state): its own supervisor, ports, builds, logs
and journal, so N of them run side by side on one machine. Everything a campaign does to one goes
through the real commands with FAULTKIT_STATE_DIR set (`up`, `status --json`, `down`, `recover`,
`validate`): the command line is the stable boundary, whatever the validator's modules become.
On a namespaced platform (kubernetes) an instance is a namespace of its own (the plan's `namespaces`),
with its record in the same kind of state folder; the cluster, loader and prebuilt images are the
defaults of the children's platform options, from the environment they inherit (KUBECONFIG,
FAULTKIT_KUBERNETES_LOAD, _IMAGES, _EXISTING). Every platform's `status --json` has one shape
(platforms/base.py, AppStatus), read here without asking which platform wrote it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.errors import PlatformError
from faultkit.platforms import DEFAULT, options_class
from faultkit.process import _die_with_parent
from faultkit.workspace import Workspace

UP_TIMEOUT_S = 180.0
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # so the children import this copy of faultkit


def command(args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "faultkit.cli", *args]


@dataclass(frozen=True)
class Health:
    ok: bool
    detail: str


@dataclass(frozen=True)
class AppInstance:
    index: int
    workspace: Workspace
    state_dir: Path
    app: str
    platform: str = DEFAULT
    namespace: str | None = None  # kubernetes: where this instance runs

    def _on(self) -> list[str]:
        return ["--platform", self.platform]

    def env(self) -> dict[str, str]:
        path = os.pathsep.join(p for p in (str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")) if p)
        return {**os.environ, "FAULTKIT_ROOT": str(self.workspace.root), "FAULTKIT_STATE_DIR": str(self.state_dir),
                "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}

    def popen(self, args: Sequence[str], stdout: Any, stderr: Any) -> subprocess.Popen[bytes]:
        """A `faultkit` child that dies with the campaign (SIGKILL included), so none outlives it."""
        return subprocess.Popen(command(args), cwd=self.workspace.root, env=self.env(), stdin=subprocess.DEVNULL,
                                stdout=stdout, stderr=stderr, preexec_fn=_die_with_parent)

    def run(self, args: Sequence[str], timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(command(args), cwd=self.workspace.root, env=self.env(), stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout, preexec_fn=_die_with_parent)
        except subprocess.TimeoutExpired:
            raise PlatformError(f"instance {self.index}: `faultkit {' '.join(args)}` did not finish in {timeout:g}s; "
                                f"see {self.state_dir}") from None

    def _checked(self, args: Sequence[str], timeout: float = 120.0) -> str:
        proc = self.run(args, timeout)
        if proc.returncode != 0:
            last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or ["no output"]
            raise PlatformError(f"instance {self.index}: `faultkit {' '.join(args)}` failed: {last[0]}")
        return proc.stdout

    def status(self) -> dict[str, Any]:
        out = self._checked(["status", "--json", *self._on()])
        try:
            data: dict[str, Any] = json.loads(out)
        except ValueError:
            raise PlatformError(f"instance {self.index}: `faultkit status --json` did not print JSON") from None
        return data

    def health(self) -> Health:
        """Healthy: the instance runs this app, deployed, and every service has every instance ready."""
        try:
            status = self.status()
        except PlatformError as e:
            return Health(False, str(e))
        if not status.get("up"):
            left = status.get("leftovers") or []  # the platform's word: `down` must sweep them first
            return Health(False, f"not up; left behind: {'; '.join(map(str, left))}" if left else "not up")
        if status.get("app") != self.app:
            return Health(False, f"runs {status.get('app')}, not {self.app}")
        if status.get("phase") != "running":
            return Health(False, f"phase {status.get('phase')}")
        unready = sorted(name for name, svc in status["services"].items()
                         if not svc["instances"] or not all(i["ready"] for i in svc["instances"]))
        if unready:
            return Health(False, f"not ready: {', '.join(unready)}")
        return Health(True, f"{len(status['services'])} services ready")

    def up(self) -> None:
        where = ["--namespace", self.namespace] if self.namespace else []
        self._checked(["up", "--app", self.app, "--timeout", f"{UP_TIMEOUT_S:g}", *self._on(), *where],
                      timeout=UP_TIMEOUT_S + options_class(self.platform).up_allowance_s)

    def down(self) -> None:
        self._checked(["down", *self._on()], timeout=240)

    def rebuild(self) -> None:
        """Down (which also sweeps what a dead supervisor left) and a fresh up: the manifests are
        applied again from the app's files, so nothing of an earlier change survives."""
        self.down()
        self.up()

    def recover(self) -> list[str]:
        """Undo what an interrupted validation left, from this instance's journal."""
        if not (self.state_dir / "journal.json").exists():
            return []
        proc = self.run(["recover", *self._on()], timeout=300)
        if proc.returncode != 0:
            # the supervisor is gone with its processes: a rebuild restores the manifests' state
            self.rebuild()
            (self.state_dir / "journal.json").unlink(missing_ok=True)
            return [f"instance {self.index}: could not recover ({proc.stderr.strip()[-200:]}); rebuilt it"]
        return [line for line in proc.stdout.splitlines() if line.strip()]


def instances(ws: Workspace, folder: Path, app: str, n: int, platform: str = DEFAULT,
              namespaces: Sequence[str] = ()) -> list[AppInstance]:
    if options_class(platform).namespaced and len(namespaces) != n:
        raise PlatformError(f"{folder}: the plan names {len(namespaces)} namespaces for {n} {platform} instances; "
                            "start a new campaign")
    return [AppInstance(k, ws, (folder / "instances" / str(k) / "state").resolve(), app, platform,
                        namespaces[k] if namespaces else None) for k in range(n)]
