"""`schedule run`: check, build, then run the clock, and whatever happens (an error, Ctrl-C,
SIGTERM, the timeout) revert every active fault, close the journal and seal the record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import load_app
from faultkit.errors import FaultkitError
from faultkit.platforms.base import Platform
from faultkit.replay import DEFAULT_LATENCY_MS
from faultkit.replay.clock import Clock, ClockParams, Status
from faultkit.replay.plan import SchedulePlan
from faultkit.replay.prepare import build_all, check_healthy
from faultkit.replay.record import RunRecord
from faultkit.replay.traffic import Traffic, bucket_for
from faultkit.validators.journal import Journal, recover
from faultkit.validators.signals import Interrupted, signals_unwind
from faultkit.workspace import Workspace


@dataclass(frozen=True)
class RunOptions:
    interval_s: float
    invoke: tuple[str, ...] | None = None
    budget_s: float = 110.0
    latency_ms: float = DEFAULT_LATENCY_MS
    timeout_s: float | None = None
    runs_dir: Path | None = None


def run_schedule(workspace: Workspace, platform: Platform, plan: SchedulePlan, options: RunOptions,
                 show: Callable[[Status], None], progress: Callable[[str], None]) -> tuple[Path, dict[str, Any]]:
    """Replay the plan; returns the sealed record's folder and its figures."""
    app = load_app(workspace, plan.doc["app"])
    check_healthy(platform, plan)
    journal = Journal(workspace.state_dir / "journal.json")
    if journal.open_changes():
        raise FaultkitError(f"{journal.path}: an earlier run left changes on the application; "
                            "run `faultkit recover` first; nothing was changed")
    if any(entry.direct for entry in plan.entries.values()):
        platform.prepare()  # as validate does: the node agent starts now, not inside an invocation
    builds = build_all(workspace, platform, app, plan, progress)
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")[:-4] + "Z"
    folder = (options.runs_dir or workspace.root / "runs") / plan.name / run_id
    bucket = bucket_for(options.latency_ms)
    run: dict[str, Any] = {
        "schema": "faultkit/run/v1", "schedule": plan.name, "schedule_digest": plan.file_digest, "run": run_id,
        "app": plan.doc["app"], "release": plan.doc["release"], "platform": platform.name,
        "params": {"interval_s": options.interval_s, "schedule_interval_s": plan.interval_s,
                   "invoke": list(options.invoke) if options.invoke else None,
                   "budget_s": options.budget_s if options.invoke else None,
                   "latency_ms": options.latency_ms, "timeout_s": options.timeout_s},
        "builds": builds, "invocations": plan.invocations,
    }
    record = RunRecord(folder, run, traffic={"service": app.entry, "bucket_s": bucket, "samples": []})
    record.bundle.write_text("schedule.json", plan.text)
    traffic = Traffic(platform, app.entry, bucket, app.signals.requests)
    clock = Clock(platform, plan, ClockParams(options.interval_s, options.invoke, options.budget_s), record,
                  journal, traffic, builds, show)
    journal.begin(run_id, f"schedule {plan.name}")
    run["started"] = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        with signals_unwind(options.timeout_s):
            clock.run()
    except (KeyboardInterrupt, Interrupted) as stop:
        run["aborted"] = str(stop) or "interrupted"
        raise
    except FaultkitError as err:
        run["aborted"] = str(err)
        raise
    finally:
        progress("reverting every active fault")
        try:
            clock.revert_all(run.get("aborted") or "end of the run")
        finally:
            recover(platform, journal)  # anything applied but not registered (killed mid-apply)
            journal.finish()
            clock.close()
            traffic.close()
            run["ended"] = datetime.now(UTC).isoformat(timespec="seconds")
            figures = record.seal()
    return folder, figures
