"""`faultkit validate`: the admission protocol (SPEC.md section 3) as stages over a platform.

lint -> patch -> build -> marker -> baseline (stages.py) -> cycles (cycles.py) -> verdict
(judge.py), every step recorded in the bundle as it happens (stagelog.py). This module only puts
them in order and guarantees the end: whatever happens (an error, Ctrl-C, SIGTERM, the timeout),
every journalled change is reverted, the verdict is judged from the bundle and the bundle sealed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.apps.signals import prometheus_labels
from faultkit.bundles import BundleWriter, dumps
from faultkit.catalog.model import Entry
from faultkit.catalog.patches import safe_path
from faultkit.catalog.vocab import ACTIONS
from faultkit.catalog.writeback import record_validation, validation_block
from faultkit.errors import FaultkitError, PlatformError, Unsupported
from faultkit.observe.alerts import AlertWatch
from faultkit.observe.jaeger import check_url
from faultkit.observe.sampler import Sampler
from faultkit.observe.trace_reader import TraceWindows
from faultkit.platforms import platform_flag
from faultkit.platforms.base import Platform
from faultkit.validators.app_changes import change_for
from faultkit.validators.cycles import Cycles
from faultkit.validators.faults import load_fault
from faultkit.validators.inputs import app_snapshot, inputs_record
from faultkit.validators.journal import Journal, recover
from faultkit.validators.judge import Verdict, judge_bundle
from faultkit.validators.params import ValidationParams
from faultkit.validators.screening import SOURCES_FROM
from faultkit.validators.signals import Interrupted, signals_unwind
from faultkit.validators.sites import SiteSamplers
from faultkit.validators.stagelog import OnStage, Progress, StageLog, no_hook, no_progress
from faultkit.validators.stages import StaticStages
from faultkit.workspace import Workspace

__all__ = ["ValidationParams", "validate"]


def check_platform(platform: Platform, entry: Entry) -> None:
    """The platform runs the entry's app and can carry out its change; otherwise a clear error.
    A check: it starts nothing (`prepare` does)."""
    if not platform.is_up():
        where = platform_flag(platform.name)
        raise PlatformError(f"the {platform.name} platform is not up; run `faultkit up{where} --app {entry.app}` first")
    if platform.app() != entry.app:
        raise PlatformError(
            f"the {platform.name} platform runs {platform.app()}, not {entry.app}; "
            f"run `faultkit down` then `faultkit up --app {entry.app}`"
        )
    if entry.direct and entry.direct.action not in platform.actions():
        raise Unsupported(
            f"{entry.direct.action} cannot be carried out on the {platform.name} platform; "
            f"use {' or '.join(p for p in ACTIONS[entry.direct.action].platforms if p != platform.name)}"
        )


def trace_windows(params: ValidationParams, app: AppDescriptor, platform: Platform) -> TraceWindows | None:
    """Where each window's spans are read: --jaeger (or FAULTKIT_JAEGER), else the descriptor's
    signals.traces.jaeger, through the platform (a Service in the cluster); None, and windows
    without `traces`, when neither names a Jaeger."""
    given, option = params.jaeger, "--jaeger"
    if not given and app.signals.traces.jaeger:
        given, option = app.signals.traces.jaeger, f"{app.name}'s signals.traces.jaeger"
    if not given:
        return None
    url = platform.query_address(check_url(given, option, in_cluster=True), option)
    return TraceWindows(check_url(url, option), app.observed, platform.telemetry_scope())


def validate(
    workspace: Workspace,
    platform: Platform,
    fault_id: str,
    params: ValidationParams,
    evidence: Path | None = None,
    progress: Progress = no_progress,
    timeout_s: float | None = None,
    record: bool = True,
    on_stage: OnStage = no_hook,
) -> tuple[Verdict, Path]:
    """Run the protocol for one fault; returns the verdict and the sealed bundle's folder.

    `on_stage(name)` is called as each stage starts, once its start is in the bundle's stages.json
    (a test blocks there to kill the run inside that stage).
    """
    params.check()
    entry, report = load_fault(workspace, fault_id)
    app = load_app(workspace, entry.app)
    check_platform(platform, entry)
    traces = trace_windows(params, app, platform)
    sites = platform.other_sites()
    alerts = (AlertWatch(platform.query_address(params.alerts, "--alerts"), params.alerts,
                         prometheus_labels(platform.telemetry_scope()),
                         {site: prometheus_labels(p.telemetry_scope()) for site, p in sites.items()})
              if params.alerts else None)
    if entry.direct:
        platform.prepare()  # what carries the action out starts now, not inside the first window
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")[:-4] + "Z"
    folder = (evidence or workspace.evidence_dir / entry.id) / run_id
    bundle = BundleWriter(folder)
    log = StageLog(bundle, progress, on_stage)
    snapshot = app_snapshot(app, entry)
    bundle.write("inputs.json", inputs_record(workspace, entry, snapshot, params, platform.name))
    if entry.code:
        bundle.write_text("patch.diff", safe_path(workspace.root, entry.code.patch, "patch").read_text("utf-8"))
    sampler = Sampler(platform, app.observed, entry.probe, entry.log.message if entry.log else None,
                      continuous_probe=params.rules >= 3, record_sources=params.rules >= SOURCES_FROM, traces=traces,
                      alerts=alerts)
    others = SiteSamplers(sites, app.observed, entry.probe, params.rules >= 3,
                          params.rules >= SOURCES_FROM) if sites else None
    journal = Journal(workspace.state_dir / "journal.json")
    journal.begin(run_id, entry.id, platform.target())
    static = StaticStages(log, workspace, platform, entry, app, params.rollout_timeout_s)
    try:
        with signals_unwind(timeout_s):
            if static.run(report):
                change = change_for(entry, build=static.new_build.id if static.new_build else None,
                                    undo_build=static.baseline_build, timeout_s=params.rollout_timeout_s)
                Cycles(log, platform, journal, sampler, entry, change, params, tuple(snapshot["scope"]),
                       others=others).run()
    except (KeyboardInterrupt, Interrupted) as stop:
        log.aborted = str(stop) or "interrupted"
        raise
    except FaultkitError as err:
        log.aborted = str(err)
        raise
    finally:
        sampler.close()
        if others:
            others.close()
        if journal.open_changes():
            progress("revert", "undoing every change the run made")
            recover(platform, journal)
        journal.finish()
        static.cleanup()
        log.save()
        verdict = judge_bundle(folder)
        bundle.write_text("verdict.json", dumps(verdict))
        digest = bundle.seal()
    if record and verdict["status"] in ("admitted", "rejected", "flaky"):
        block = validation_block(workspace, entry, folder, digest, status=verdict["status"],
                                 failed_rules=verdict["failed_rules"], platform=platform.name,
                                 window_s=params.window_s, repeat=params.repeat)
        record_validation(workspace, entry, block)
    return verdict, folder
