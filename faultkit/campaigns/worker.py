"""One fault on one instance: the real `faultkit validate` as a child process.

The child writes its bundle under the campaign folder (`--evidence`), records its verdict in the
entry as every validation does, and prints the verdict (`--json`). While it runs, the bundle's
stages.json says which stage it is in (the validator writes it before each stage starts), which
is what the live view shows. The child dies with the campaign (SIGKILL included); on SIGTERM or
Ctrl-C the campaign asks it to stop the validator's way (SIGTERM: it reverts, then seals).
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.campaigns.board import Board
from faultkit.campaigns.instances import AppInstance
from faultkit.campaigns.plan import Plan, PlannedFault
from faultkit.campaigns.timing import run_started
from faultkit.validators.cycles import measured_the_machine

POLL_S = 0.5
STOP_GRACE_S = 180.0  # a stopped validation reverts its change: a rollout back can take a while


@dataclass(frozen=True)
class RunResult:
    outcome: str  # admitted, rejected, flaky, aborted, overloaded, crashed, interrupted
    verdict: dict[str, Any] | None
    bundle: Path | None
    detail: str
    wall_s: float


def validate_args(plan: Plan, fault: PlannedFault, bundles: Path) -> list[str]:
    args = ["validate", "--fault", fault.id, "--window", f"{plan.window_s:g}s", "--interval", f"{plan.interval_s:g}s",
            "--repeat", str(plan.repeat), "--evidence", str(bundles), "--platform", plan.platform, "--json",
            # a run that hangs is stopped (and reverted) by the validator itself, then tried again
            "--timeout", f"{max(600.0, 3 * fault.expected_s):g}"]
    if plan.max_load is not None:
        args += ["--max-load", f"{plan.max_load:g}"]
    if plan.max_steal is not None:
        args += ["--max-steal", f"{plan.max_steal:g}"]
    if plan.rules is not None:
        args += ["--rules", str(plan.rules)]
    if plan.stability is not None:
        args += ["--stability", plan.stability]
    return args


def newest_run(bundles: Path, since: float | None = None) -> Path | None:
    """The latest run folder begun at or after `since`: an earlier attempt's bundle, kept beside it,
    is never taken for this one's (a run's folder is named by its start time)."""
    runs = sorted(p for p in bundles.iterdir() if p.is_dir()) if bundles.is_dir() else []
    if since is not None:
        runs = [p for p in runs if (run_started(p.name) or 0.0) >= since - 1.0]
    return runs[-1] if runs else None


def current_stage(bundles: Path, since: float | None = None) -> str:
    run = newest_run(bundles, since)
    if run is None:
        return "starting"
    try:
        stages = json.loads((run / "stages.json").read_text("utf-8"))
    except (OSError, ValueError):
        return "starting"
    if stages.get("current"):
        return str(stages["current"])
    done = stages.get("stages") or []
    return f"{done[-1]['stage']} done" if done else "starting"


def sealed_verdict(run: Path | None) -> dict[str, Any] | None:
    """The verdict of a run that finished (sealed its bundle), else None."""
    if run is None or not (run / "MANIFEST.json").is_file():
        return None
    try:
        verdict: dict[str, Any] = json.loads((run / "verdict.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return verdict


def brief(verdict: dict[str, Any]) -> dict[str, Any]:
    """What the campaign keeps of a verdict (the bundle holds the rest)."""
    return {"status": verdict.get("status"), "failed_rules": list(verdict.get("failed_rules") or []),
            "summary": verdict.get("summary", ""), "cycles": len(verdict.get("cycles") or [])}


def run_fault(instance: AppInstance, plan: Plan, fault: PlannedFault, bundles: Path, logs: Path, board: Board,
              stop: threading.Event) -> RunResult:
    started = time.time()
    logs.mkdir(parents=True, exist_ok=True)
    stem = logs / f"{fault.id}.{time.strftime('%Y%m%dT%H%M%S')}"
    with open(f"{stem}.out", "wb") as out, open(f"{stem}.err", "wb") as err:
        child = instance.popen(validate_args(plan, fault, bundles), out, err)
        stopped = False
        while child.poll() is None:
            if stop.is_set() and not stopped:
                child.send_signal(signal.SIGTERM)
                stopped = True
                try:
                    child.wait(STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    child.kill()
                break
            stage = current_stage(bundles, started)
            board.worker(instance.index, fault.id, stage, plan.window_s if stage.startswith("window ") else None)
            time.sleep(POLL_S)
        child.wait()
    wall = round(time.time() - started, 1)
    run = newest_run(bundles, started)
    verdict = sealed_verdict(run)
    stderr = Path(f"{stem}.err").read_text("utf-8", errors="replace").strip().splitlines()
    last = next((line for line in reversed(stderr) if line.startswith("Error:")), stderr[-1] if stderr else "")
    if stopped or (stop.is_set() and (verdict is None or verdict.get("status") == "aborted")):
        return RunResult("interrupted", None, run, "the campaign was stopped during this run", wall)
    if verdict is None:
        return RunResult("crashed", None, run, last or f"validate exited {child.returncode} without a verdict", wall)
    stable = stable_result(Path(f"{stem}.out")) if plan.stability is not None else None
    extra: dict[str, Any] = {}
    if stable is not None:  # two runs: the first (admitting) bundle, judged with the second beside it
        first, second = stable["first"], stable.get("second") or {}
        run, verdict, extra = Path(first["bundle"]), {**first, "status": stable["status"]}, {
            "stability": second.get("status")}
        if second.get("bundle") and stable["status"] == "aborted":
            run = Path(second["bundle"])  # the second run ended: its machine record says why
    status = str(verdict.get("status"))
    if status == "aborted" and measured_the_machine(run):
        status = "overloaded"
    return RunResult(status, brief(verdict) | extra, run, last or verdict.get("summary", ""), wall)


def stable_result(out: Path) -> dict[str, Any] | None:
    """What `validate --stability --json` printed: the combined status and both verdicts."""
    try:
        data = json.loads(out.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("first"), dict) else None
