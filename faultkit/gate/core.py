"""The gate's core: changed entries (and entries whose patch changed), linted against the whole
catalog's invariants, validated when a validator is given. Returns data; commands render it.

Only the changed files are linted; the invariants (unique ids, one change once) are checked from
the facts of every file, which the lint cache holds (issue 20): a one-entry pull request re-reads
one entry. The unchanged entries come first, so when a change repeats an existing id or change,
the change is the one blamed.

Trust (issue 32): an entry that claims an admission is checked as `catalog build` checks it, with
the trust anchors of the base branch (REF's faultkit.toml and keys, read from git) or of a file the
user names outside the repository, never the head's; a claim its evidence does not back fails the
case. Entries whose evidence changed are cases too (a bundle's windows deleted, say). Privileged
changes (gate/privileged.py) are listed, and fail the gate unless a maintainer accepts them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from faultkit.catalog.lint import EvidenceRule, Finding, Linter, discover, load_entry_file
from faultkit.catalog.lint_cache import FileLint, Store
from faultkit.catalog.model import Entry
from faultkit.catalog.release import Custody, State, check_bundle, second_verdict, verdict_state
from faultkit.errors import FaultkitError
from faultkit.gate.git_changes import Changes, changes, resolve
from faultkit.gate.privileged import Privileged, privileged
from faultkit.keys import anchors
from faultkit.platforms import DEFAULT, PlatformOptions
from faultkit.workspace import Workspace

# A validator runs the admission protocol on one entry and returns its verdict as data:
# {"status": "admitted" | "rejected" | "flaky", "failed_rules": [rule, ...],
#  "rules": [{"rule", "passed", "measured", "threshold", "counted", ...}]} (validators/judge.py).
Validator = Callable[[Workspace, Entry], Mapping[str, Any]]
# what a recorded admission may honestly come to: admitted, or left out of a release until validated again
HONEST = ("admitted", "single-verdict", "flaky")
ATTEMPTS = 3  # runs a changed fault may take while they measure the machine, as a campaign's default


@dataclass(frozen=True)
class Case:
    """One changed entry (one JUnit testcase)."""

    file: str  # workspace-relative
    id: str
    why: str  # "changed" or "patch changed: <path>"
    findings: tuple[Finding, ...] = ()
    validation: str = "skipped"  # "skipped", "admitted", "rejected", "flaky", "error"
    failed_rules: tuple[str, ...] = ()
    recorded: str = ""  # the entry's own verdict state (admitted, stale-entry, no-verdict, ...)

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def passed(self) -> bool:
        return not self.errors and self.validation in ("skipped", "admitted")


@dataclass(frozen=True)
class GateResult:
    changes: Changes
    cases: tuple[Case, ...]
    notes: tuple[str, ...] = field(default=())
    privileged: tuple[Privileged, ...] = ()
    accepted: bool = False  # a maintainer accepted the privileged changes (--accept-privileged)

    @property
    def privileged_passed(self) -> bool:
        return not any(p.error for p in self.privileged) and (self.accepted or not self.privileged)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cases) and self.privileged_passed


def find_validator(window_s: float = 20.0, interval_s: float = 2.0, platform: str = DEFAULT,
                   repeat: int = 2, max_load: float | None = None, rollout_timeout_s: float = 60.0,
                   stability_s: float | None = None, options: PlatformOptions | None = None, alerts: str = "",
                   alert_raised: bool = False) -> Validator:
    """The admission protocol on the platform that runs the app, as the gate's Validator, opened with
    the options the gate was given (None: the platform's defaults). With `stability_s`, a first
    verdict that admits is checked by a second run at that window, as `validate --stability` does:
    admitted twice is admitted, admitted once is flaky. `alerts` and `alert_raised` are validate's
    (--alerts, and whether the base revision's faultkit.toml asks alert-raised to decide)."""
    from faultkit.observe.load import Limits, Overloaded
    from faultkit.platforms import open_platform
    from faultkit.validators.pipeline import ValidationParams, validate

    limits = Limits() if max_load is None else Limits(max_load_per_core=max_load)

    params = ValidationParams(window_s=window_s, interval_s=interval_s, repeat=repeat,
                              rollout_timeout_s=rollout_timeout_s, limits=limits, alerts=alerts,
                              alert_raised=alert_raised)

    def once(workspace: Workspace, entry: Entry, window_s: float) -> Mapping[str, Any]:
        # a run that measured the machine (a runner's CPU steal, say) is an error to retry, as a
        # campaign retries it, never a rejection of the pull request's fault; the last one stands
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return validate(workspace, open_platform(platform, workspace, options), entry.id,
                                replace(params, window_s=window_s), record=False)[0]
            except Overloaded:
                if attempt == ATTEMPTS:
                    raise
        raise AssertionError("unreachable: the last attempt returns or raises")

    def run(workspace: Workspace, entry: Entry) -> Mapping[str, Any]:
        first = once(workspace, entry, window_s)
        if stability_s is None or first["status"] != "admitted":
            return first
        second = once(workspace, entry, stability_s)
        if second["status"] in ("admitted", "aborted"):
            return second
        return {**second, "status": "flaky"}  # the second run's failed rules say why

    return run


def entries_using(every: dict[str, FileLint], patches: tuple[str, ...]) -> dict[str, str]:
    """{entry file: patch} for the catalog entries whose code.patch is one of `patches`."""
    wanted = set(patches)
    return {name: str(r.facts.patch) for name, r in every.items() if r.facts and r.facts.patch in wanted}


def entries_with_evidence(every: dict[str, FileLint], evidence: tuple[str, ...]) -> dict[str, str]:
    """{entry file: evidence folder} for the entries whose id names a folder of a changed evidence
    file (evidence/<id>/<run>/..., evidence/campaigns/<c>/bundles/<id>/<run>/...)."""
    by_id = {r.facts.id: name for name, r in every.items() if r.facts}
    out: dict[str, str] = {}
    for path in evidence:
        parts = path.split("/")
        for i, part in enumerate(parts[:-1]):
            if part in by_id:
                out.setdefault(by_id[part], "/".join(parts[: i + 1]))
    return out


def gate_custody(workspace: Workspace, ch: Changes, trust_config: Path | None = None) -> Custody:
    """The judge, and the trust anchors as REF holds them (or as the user's file outside says)."""
    from faultkit.validators.judge import judge_bundle  # the gate sits above the validators

    return Custody(judge=judge_bundle, trusted=anchors(workspace.root, (), ch.target or ch.base, trust_config))


def run_gate(workspace: Workspace, base: str, validator: Validator | None = None,
             store: Store | None = None, evidence_rules: Sequence[EvidenceRule] = (),
             accept_privileged: bool = False, trust_config: Path | None = None) -> GateResult:
    ch = changes(workspace, base)
    custody = gate_custody(workspace, ch, trust_config)
    linter = Linter(workspace, store, evidence_rules)
    every = dict(linter.results(discover(workspace)))  # cached facts: the catalog's index
    why = dict.fromkeys(ch.entries, "changed")
    users = entries_using(every, ch.patches)
    for file, patch in users.items():
        why.setdefault(file, f"patch changed: {patch}")
    for file, folder in entries_with_evidence(every, ch.evidence).items():
        why.setdefault(file, f"evidence changed: {folder}")
    used = set(users.values())
    notes = [f"{p}: no entry uses this patch" for p in ch.patches if p not in used]
    notes += [f"{f}: entry removed" for f in ch.removed]
    given = [(f, every[f]) if f in every else linter.result(workspace.root / f) for f in sorted(why)]
    rest = [(f, r) for f, r in every.items() if f not in why]
    report = linter.report(given, rest, strict=False)
    linter.save()
    by_file: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_file.setdefault(f.file, []).append(f)
    cases = [_case(workspace, file, why[file], tuple(by_file.get(file, ())), validator, custody)
             for file in sorted(why)]
    top = resolve(workspace, base)[0]
    return GateResult(ch, tuple(cases), tuple(notes), privileged(top, ch), accept_privileged)


def recorded_state(workspace: Workspace, entry: Entry, file: str, custody: Custody) -> tuple[str, Finding | None]:
    """The entry's own verdict as `catalog build` would take it, and a finding when it claims an
    admission its evidence does not back (untrusted signer, another entry, a block the bundle does not
    say, a tampered bundle). A stale verdict is honest: the release leaves it out until validated."""
    try:
        static = verdict_state(workspace, entry)
    except FaultkitError:
        return "unknown", None  # lint has said what is wrong with the entry or its patch
    if static.status != "admitted":
        return static.status, None
    try:
        state, digest, _ = check_bundle(workspace, entry, file, custody)
        if state.status == "admitted":
            state = second_verdict(workspace, entry, file, custody, digest)
    except FaultkitError as e:
        state = State("tampered", str(e))
    if state.status in HONEST:
        return state.status, None
    return state.status, Finding(file, 1, "validation", f"claims an admission its evidence does not back: "
                                                        f"{state.status}: {state.detail}", "error", "custody")


def _case(
    workspace: Workspace, file: str, why: str, findings: tuple[Finding, ...], validator: Validator | None,
    custody: Custody,
) -> Case:
    item, _ = load_entry_file(workspace.root / file, workspace)
    entry = item.entry
    ident = entry.id if entry else Path(file).stem
    case = Case(file, ident, why, findings)
    if entry is None or case.errors:
        return case
    recorded, claim = recorded_state(workspace, entry, file, custody)
    if claim is not None:
        return Case(file, ident, why, (*findings, claim), "skipped", (), recorded)
    if validator is None:
        return Case(file, ident, why, findings, "skipped", (), recorded)
    try:
        verdict = validator(workspace, entry)
    except FaultkitError as e:
        extra = Finding(file, 1, "(validation)", str(e), "error", "validation")
        return Case(file, ident, why, (*findings, extra), "error", (), recorded)
    return Case(file, ident, why, findings, str(verdict.get("status", "rejected")), failed_rules(verdict), recorded)


def failed_rules(verdict: Mapping[str, Any]) -> tuple[str, ...]:
    """The verdict's own failed_rules, each with its measured value: screening criteria that did
    not hold are informational (one of them suffices) and are not failures of the fault (issue 12)."""
    out = []
    for name in verdict.get("failed_rules", ()):
        records = [r for r in verdict.get("rules", ()) if r.get("rule") == name and not r.get("passed", False)]
        counted = [r for r in records if r.get("counted", True)]
        out.append(_rule_text((counted or records)[0]) if records else str(name))
    return tuple(out)


def _rule_text(rule: Mapping[str, Any]) -> str:
    text = f"{rule.get('rule')}: measured {rule.get('measured')!r}, threshold {rule.get('threshold')!r}"
    return f"{text} ({rule['detail']})" if rule.get("detail") else text
