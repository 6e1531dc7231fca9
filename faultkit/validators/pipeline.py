"""`faultkit validate`: the admission protocol (SPEC.md section 3) as stages over a platform.

lint -> patch -> build -> marker -> baseline -> cycles -> verdict. A cycle is: before window,
inject, after window, revert, recovery window. Every cycle has a before window of its own, taken
after the previous recovery window: a symptom still fading early in a recovery window (a caller's
timeout outliving the revert) is judged by the recovery rules, and must not count against the next
injection's baseline. Config faults run one
uncounted cycle first (change, restore) and count only the later ones, as the protocol asks.

Every change goes through the write-ahead journal; an interruption of any kind reverts it.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from faultkit import __version__
from faultkit.apps.descriptor import AppDescriptor, load_app, suggest
from faultkit.catalog.lint import Report, lint
from faultkit.catalog.model import Entry, thaw
from faultkit.catalog.patches import read_patch, safe_path
from faultkit.catalog.vocab import ACTIONS
from faultkit.errors import FaultkitError, InputError, PlatformError, Unsupported, UsageError
from faultkit.evidence import BundleWriter, dumps
from faultkit.observe.sampler import Sampler, WindowSpec
from faultkit.platforms.base import Build, Platform
from faultkit.process import run
from faultkit.validators import screening
from faultkit.validators.journal import Journal, recover
from faultkit.validators.judge import judge_bundle
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write, dump_yaml

Progress = Callable[[str, str], None]  # (stage, detail)


@dataclass(frozen=True)
class Params:
    window_s: float = 300.0
    interval_s: float = 2.0
    repeat: int = 2
    rollout_timeout_s: float = 60.0

    def check(self) -> None:
        if self.window_s < self.interval_s:
            raise UsageError(
                f"--window {self.window_s:g}s is shorter than the sampling interval "
                f"({self.interval_s:g}s); use a window of at least {self.interval_s:g}s"
            )
        if self.repeat < 1:
            raise UsageError(f"--repeat {self.repeat}: at least one injection is needed")


class Interrupted(BaseException):
    """SIGTERM or the overall timeout: unwind like Ctrl-C so every change is reverted."""


@dataclass
class Run:
    workspace: Workspace
    platform: Platform
    entry: Entry
    app: AppDescriptor
    params: Params
    bundle: BundleWriter
    journal: Journal
    progress: Progress
    stages: list[dict[str, Any]] = field(default_factory=list)
    cycles: list[dict[str, Any]] = field(default_factory=list)
    aborted: str | None = None
    tmp: Path | None = None
    new_build: Build | None = None
    baseline_build: str | None = None

    # ---------------------------------------------------------------- records

    current: str | None = None
    hold_at: str | None = None

    def save(self) -> None:
        self.bundle.write(
            "stages.json",
            {"stages": self.stages, "cycles": self.cycles, "aborted": self.aborted, "current": self.current},
        )

    def begin(self, name: str, detail: str = "") -> None:
        """Note the stage now running, so an interrupted run's record says where it stopped."""
        self.current = name
        self.save()
        self.progress(name, detail)
        if self.hold_at == name:
            time.sleep(120)  # a test's seam: hold here so it can kill the run inside this stage

    def stage(self, name: str, status: str, detail: str = "", **data: Any) -> bool:
        self.current = None
        self.stages.append({"stage": name, "status": status, "detail": detail, "at": round(time.time(), 3), **data})
        self.save()
        return status != "failed"

    # ---------------------------------------------------------------- static stages

    def check_lint(self, report: Report) -> bool:
        self.begin("lint")
        mine = [f for f in report.findings if f.severity == "error"]
        detail = "; ".join(f.render() for f in mine[:5])
        return self.stage("lint", "failed" if mine else "ok", detail or "clean", measured=len(mine), threshold=0)

    def apply_patch(self) -> bool:
        if not self.entry.code:
            return self.stage("patch", "skipped")
        self.begin("patch")
        assert self.app.source_dir is not None
        self.tmp = Path(tempfile.mkdtemp(prefix="faultkit-src-"))
        src = self.tmp / self.app.source_dir.relative_to(self.app.root)
        shutil.copytree(self.app.source_dir, src, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
        patch = safe_path(self.workspace.root, self.entry.code.patch, "patch")
        result = run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=self.tmp)
        return self.stage(
            "patch",
            "ok" if result.ok else "failed",
            result.tail() or "applied cleanly",
            measured="applies" if result.ok else "does not apply",
            threshold="applies",
        )

    def build(self) -> bool:
        if not self.entry.code:
            return self.stage("build", "skipped")
        self.begin("build")
        assert self.tmp is not None and self.app.source_dir is not None
        service_dir = self.tmp / self.app.service_source(self.entry.target.service)  # type: ignore[operator]
        for what, cmd in (("lint", self.app.lint_command), ("tests", self.app.test_command)):
            if not cmd:
                continue
            self.progress("build", f"running the service's {what}")
            result = run(cmd, cwd=service_dir, timeout=600)
            if not result.ok:
                return self.stage(
                    "build",
                    "failed",
                    f"the service's {what} failed: {' '.join(cmd)}\n{result.tail(30)}",
                    measured=f"{what} exit {result.code}",
                    threshold="exit 0",
                )
        src_root = self.tmp / self.app.source_dir.relative_to(self.app.root)
        self.new_build = self.platform.build(self.entry.target.service, source_root=str(src_root))
        return self.stage(
            "build",
            "ok",
            "the service's lint and unit tests pass",
            build=self.new_build.id,
            measured="exit 0",
            threshold="exit 0",
        )

    def check_marker(self) -> bool:
        if not self.entry.code or self.new_build is None:
            return self.stage("marker", "skipped")
        self.begin("marker")
        marker, service = self.entry.code.marker, self.entry.target.service
        in_new = self.platform.build_contains(self.new_build.id, marker)
        earlier = [b.id for b in self.platform.builds(service) if b.id != self.new_build.id]
        in_earlier = [b for b in earlier if self.platform.build_contains(b, marker)]
        ok = in_new and not in_earlier
        detail = (
            f"{marker!r} found in the new build and in none of {len(earlier)} earlier builds"
            if ok
            else f"{marker!r} in new build: {in_new}; "
            f"in earlier builds: {', '.join(b[:19] for b in in_earlier) or 'none'}"
        )
        return self.stage(
            "marker",
            "ok" if ok else "failed",
            detail,
            measured=len(in_earlier) if in_new else "absent",
            threshold="in new build, 0 earlier",
        )

    def baseline(self) -> bool:
        self.begin("baseline")
        deadline = time.monotonic() + self.params.rollout_timeout_s
        while True:
            instances = self.platform.instances()
            unready = sorted({i.service for i in instances if not i.ready})
            if not unready:
                break
            if time.monotonic() > deadline:
                # not a property of the fault: no verdict, an error the user can act on
                raise PlatformError(f"{', '.join(unready)} not ready before any change; see `faultkit status`, "
                                    "then `faultkit down` and `faultkit up`")
            time.sleep(1)
        target = [i for i in instances if i.service == self.entry.target.service]
        self.baseline_build = target[0].build if target else None
        detail = f"{len(instances)} instances ready"
        if self.entry.config:
            c = self.entry.config
            deployed = self.platform.read_field(c.workload, c.container, c.field)
            if deployed != c.old:
                raise PlatformError(
                    f"{c.workload}/{c.container} {c.field} is deployed as {deployed!r}, not the entry's "
                    f"old value {c.old!r}; run `faultkit recover`, or `faultkit down` and `up`"
                )
        return self.stage("baseline", "ok", detail, build=self.baseline_build, measured=0, threshold=0)

    # ---------------------------------------------------------------- cycles

    def window(self, sampler: Sampler, name: str, lead: dict[str, Any] | None = None) -> str:
        self.begin(f"window {name}")
        data = sampler.window(
            WindowSpec(name, self.params.window_s, self.params.interval_s),
            tick=lambda n, left: self.progress("observe", f"window {n}: {left:.0f}s left"),
            lead=lead,
        )
        data["points"] = screening.points(data, tuple(self.app_info()["scope"]))
        self.bundle.write(f"windows/{name}.json", data)
        return name

    def cycles_plan(self) -> list[tuple[int, bool]]:
        first = 0 if self.entry.config else 1
        return [(k, k > 0) for k in range(first, self.params.repeat + 1)]

    def run_cycles(self, sampler: Sampler) -> None:
        for index, counted in self.cycles_plan():
            before = self.window(sampler, f"before-{index}")
            cycle: dict[str, Any] = {"index": index, "counted": counted, "before": before}
            self.cycles.append(cycle)
            # A direct action acts at once: its after window opens just before it starts. A code or
            # config change is live once its rollout is done, and its window opens then.
            lead = sampler.sample(probe=False) if self.entry.direct else None
            cycle["inject"] = self.inject()
            self.save()
            if cycle["inject"]["ok"]:
                cycle["after"] = self.window(sampler, f"after-{index}", lead)
            cycle["revert"] = self.revert()
            self.save()
            cycle["recovery"] = self.window(sampler, f"recovery-{index}")
            self.save()
            if not cycle["inject"]["ok"] or not cycle["revert"]["ok"]:
                break  # a change that cannot be made or undone will not behave better the next time

    def inject(self) -> dict[str, Any]:
        e = self.entry
        self.begin("inject", e.mechanism)
        if e.code:
            assert self.new_build is not None and self.baseline_build is not None
            change = {
                "kind": "rollout",
                "service": e.target.service,
                "build": self.new_build.id,
                "undo_build": self.baseline_build,
                "timeout": self.params.rollout_timeout_s,
            }
            return self.apply(
                change,
                lambda: self.platform.rollout(
                    e.target.service,
                    self.new_build.id,  # type: ignore[union-attr]
                    timeout=self.params.rollout_timeout_s,
                ),
                self.check_build,
            )
        if e.config:
            c = e.config
            change = {
                "kind": "patch",
                "workload": c.workload,
                "container": c.container,
                "field": c.field,
                "value": c.new,
                "undo_value": c.old,
                "timeout": self.params.rollout_timeout_s,
            }
            return self.apply(
                change,
                lambda: self.platform.patch_field(
                    c.workload, c.container, c.field, c.new, timeout=self.params.rollout_timeout_s
                ),
                lambda: self.check_value(c.new),
            )
        assert e.direct is not None
        # pod level acts on one replica, service level on every replica
        params = {"mode": "one" if e.level == "pod" else "all", **thaw(e.direct.params)}
        change = {"kind": "action", "action": e.direct.action, "service": e.target.service, "params": params}
        return self.apply(
            change,
            lambda: self.platform.start_action(e.direct.action, e.target.service, params),  # type: ignore[union-attr]
            lambda: {
                "ok": True,
                "measured": "started",
                "threshold": "started",
                "detail": f"{e.direct.action} on {e.target.service}",
            },
        )  # type: ignore[union-attr]

    def apply(
        self, change: dict[str, Any], do: Callable[[], Any], check: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        index = self.journal.record(change)
        self.begin(f"{self.current}:applying")
        try:
            handle = do()
        except PlatformError as err:
            self.journal.mark(index, "applied")
            return {
                "ok": False,
                "measured": "not ready",
                "threshold": "started and ready",
                "detail": f"the change was made but did not become ready: {err}",
            }
        self.journal.mark(index, "applied", **({"handle": handle} if isinstance(handle, str) else {}))
        return check()

    def check_build(self, expect: str | None = None) -> dict[str, Any]:
        expect = expect or (self.new_build.id if self.new_build else None)
        builds = sorted({i.build for i in self.platform.instances(self.entry.target.service)})
        ok = builds == [expect]
        return {
            "ok": ok,
            "build": expect,
            "measured": ", ".join(b[:19] for b in builds),
            "threshold": (expect or "")[:19],
            "detail": "every replica runs the expected build" if ok else "replicas run other builds",
        }

    def check_value(self, expect: str | None) -> dict[str, Any]:
        c = self.entry.config
        assert c is not None
        deployed = self.platform.read_field(c.workload, c.container, c.field)
        ready = self.platform.ready(self.entry.target.service)
        ok = deployed == expect and ready
        return {
            "ok": ok,
            "measured": deployed,
            "threshold": expect,
            "detail": f"deployed value read back; {self.entry.target.service} ready: {ready}",
        }

    def revert(self) -> dict[str, Any]:
        self.begin("revert", self.entry.mechanism)
        self.begin("revert:applying")
        try:
            done = recover(self.platform, self.journal)
        except PlatformError as err:
            return {"ok": False, "measured": "failed", "threshold": "restored", "detail": f"revert failed: {err}"}
        if self.entry.code:
            return self.check_build(self.baseline_build)
        if self.entry.config:
            return self.check_value(self.entry.config.old)
        return {
            "ok": True,
            "measured": "stopped",
            "threshold": "stopped",
            "detail": "; ".join(done) or "nothing to stop",
        }

    def app_info(self) -> dict[str, Any]:
        target = self.entry.target.service
        return {
            "name": self.app.name,
            "version": self.app.version,
            "entry": self.app.entry,
            "services": list(self.app.observed),
            "scope": list(self.app.scope(target)) if target in self.app.service_names else [target],
            "dependants": list(self.app.callers(target)) if target in self.app.service_names else [],
            "sites": [s.name for s in self.app.sites],
        }


def load_fault(workspace: Workspace, fault_id: str) -> tuple[Entry, Report]:
    paths = sorted(workspace.catalog_dir.glob(f"*/{fault_id}.yaml"))
    if not paths:
        ids = sorted(p.stem for p in workspace.catalog_dir.glob("*/*.yaml"))
        raise InputError(
            f"no fault with id {fault_id!r} in the catalog{suggest(fault_id, ids)}; "
            "`faultkit catalog lint` lists what is there"
        )
    report = lint(workspace, paths[:1])
    if not report.entries:
        first = next((f.render() for f in report.findings if f.severity == "error"), "")
        raise InputError(f"{fault_id}: the entry does not load ({first}); fix it, then validate")
    return report.entries[0], report


@contextmanager
def signals_unwind(timeout_s: float | None) -> Iterator[None]:
    """SIGTERM and the overall timeout unwind the stack like Ctrl-C, so `finally` reverts."""

    def stop(signum: int, _frame: Any) -> None:
        raise Interrupted("timeout" if signum == signal.SIGALRM else "terminated")

    old_term = signal.signal(signal.SIGTERM, stop)
    old_alarm = signal.signal(signal.SIGALRM, stop)
    if timeout_s:
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGALRM, old_alarm)


def validate(
    workspace: Workspace,
    platform: Platform,
    fault_id: str,
    params: Params,
    evidence: Path | None = None,
    progress: Progress = lambda s, d: None,
    timeout_s: float | None = None,
    record: bool = True,
    environ: Mapping[str, str] = os.environ,
) -> tuple[dict[str, Any], Path]:
    """Run the protocol for one fault; returns the verdict and the sealed bundle's folder."""
    params.check()
    entry, report = load_fault(workspace, fault_id)
    app = load_app(workspace, entry.app)
    if not platform.is_up():
        raise PlatformError(f"the {platform.name} platform is not up; run `faultkit up --app {entry.app}` first")
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
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")[:-4] + "Z"
    folder = (evidence or workspace.evidence_dir / entry.id) / run_id
    bundle = BundleWriter(folder)
    journal = Journal(workspace.state_dir / "journal.json")
    r = Run(workspace, platform, entry, app, params, bundle, journal, progress, hold_at=environ.get("FAULTKIT_HOLD_AT"))
    r.bundle.write("inputs.json", inputs_record(workspace, entry, r.app_info(), params, platform.name))
    if entry.code:
        r.bundle.write_text("patch.diff", safe_path(workspace.root, entry.code.patch, "patch").read_text("utf-8"))
    journal.begin(run_id, entry.id)
    sampler = Sampler(
        platform,
        app.observed,
        entry.probe,
        entry.log.message if entry.log else None,
    )
    try:
        with signals_unwind(timeout_s):
            static_ok = r.check_lint(report) and r.apply_patch() and r.build() and r.check_marker() and r.baseline()
            if static_ok:
                r.run_cycles(sampler)
    except (KeyboardInterrupt, Interrupted) as stop:
        r.aborted = str(stop) or "interrupted"
        raise
    except FaultkitError as err:
        r.aborted = str(err)
        raise
    finally:
        sampler.close()
        if journal.open_changes():
            progress("revert", "undoing every change the run made")
            recover(platform, journal)
        journal.finish()
        if r.tmp:
            shutil.rmtree(r.tmp, ignore_errors=True)
        r.save()
        verdict = judge_bundle(folder)
        bundle.write_text("verdict.json", dumps(verdict))
        digest = bundle.seal()
    if record and verdict["status"] in ("admitted", "rejected", "flaky"):
        record_validation(workspace, entry, folder, digest, verdict, params, platform.name)
    return verdict, folder


def inputs_record(
    workspace: Workspace, entry: Entry, app_info: dict[str, Any], params: Params, platform: str
) -> dict[str, Any]:
    body = {k: v for k, v in thaw(entry.raw).items() if k != "validation"}
    patch = None
    if entry.code:
        info = read_patch(safe_path(workspace.root, entry.code.patch, "patch"))
        patch = {"path": entry.code.patch, "digest": info.digest}
    return {
        "entry": body,
        "entry_digest": entry.digest(),
        "patch": patch,
        "app": app_info,
        "platform": platform,
        "toolkit": __version__,
        "rules_version": screening.RULES_VERSION,
        "params": {
            "window_s": params.window_s,
            "interval_s": params.interval_s,
            "repeat": params.repeat,
            "thresholds": {
                "errors_per_min": screening.ERRORS_PER_MIN,
                "new_error_logs_per_min": screening.NEW_ERROR_LOGS_PER_MIN,
                "serving_fraction": screening.SERVING_FRACTION,
            },
        },
    }


def record_validation(
    workspace: Workspace,
    entry: Entry,
    folder: Path,
    digest: str,
    verdict: dict[str, Any],
    params: Params,
    platform: str,
) -> None:
    """Write the verdict's record into the entry file, leaving the rest of the file as it was."""
    path = workspace.catalog_dir / entry.app / f"{entry.id}.yaml"
    record: dict[str, Any] = {
        "verdict": verdict["status"],
        "bundle": folder.resolve().relative_to(workspace.root).as_posix()
        if folder.resolve().is_relative_to(workspace.root)
        else str(folder),
        "bundle_digest": digest,
        "entry_digest": entry.digest(),
        "at": datetime.fromtimestamp(folder.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "platform": platform,
        "window_s": params.window_s,
        "repeat": params.repeat,
    }
    if entry.code:
        record["patch_digest"] = read_patch(safe_path(workspace.root, entry.code.patch, "patch")).digest
    if verdict["failed_rules"]:
        record["failed_rules"] = verdict["failed_rules"]
    lines = path.read_text("utf-8").splitlines(keepends=True)
    kept: list[str] = []
    skipping = False
    for line in lines:
        if line.startswith("validation:"):
            skipping = True
            continue
        if skipping and (line.startswith((" ", "\t")) or not line.strip()):
            continue
        skipping = False
        kept.append(line)
    text = "".join(kept).rstrip("\n") + "\n" + dump_yaml({"validation": record})
    atomic_write(path, text)
