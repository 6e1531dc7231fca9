"""The verdict, computed from an evidence bundle alone.

`validate` calls `judge_bundle` on its own bundle before sealing it, and `faultkit judge BUNDLE`
calls it again later: both read the same files, so the verdicts agree byte for byte. Each bundle
is judged under the screening rules it was sealed with (screening.py: v2-v5). A v5 window's
`sources` (which source measured its figures) are shown beside the verdict (`recorded_sources`),
never read by a rule, so the verdict's bytes do not depend on them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypedDict, cast

from faultkit.bundles import dumps, read_bytes, read_object, signer, verify_bundle
from faultkit.errors import InputError
from faultkit.observe.window import Window
from faultkit.platforms.base import short_id
from faultkit.validators import alert_rule, probe_rule
from faultkit.validators import screening as sc
from faultkit.validators.records import CheckRecord, CycleRecord, StagesFile
from faultkit.validators.screening import Rule, RuleRecord
from faultkit.validators.site_rule import other_site_rule, window_names

Status = Literal["admitted", "rejected", "flaky", "aborted"]


class CycleVerdict(TypedDict):
    index: int
    passed: bool


class Verdict(TypedDict):
    """verdict.json; `judge` makes it byte for byte the same from the same bundle."""

    fault: str
    status: Status
    failed_rules: list[str]
    cycles: list[CycleVerdict]
    rules: list[RuleRecord]
    window_s: float
    repeat: int
    summary: str


# Stages whose failure ends validation before anything is observed, and the rule each one proves.
STAGE_RULES = {
    "lint": "entry-lints-clean",
    "patch": "patch-applies",
    "build": "service-lint-and-tests-pass",
    "marker": "patch-text-in-new-build-only",
    "baseline": "app-healthy-at-baseline",
}


def judge_bundle(folder: Path) -> Verdict:
    """The verdict from the bundle's files; a bundle whose records are not shaped as validate writes
    them (a list where an object belongs, a missing field) is refused in one line, never a crash."""
    inputs = read_object(folder, "inputs.json")
    made_under = inputs.get("rules_version")
    if made_under not in sc.SUPPORTED_VERSIONS:
        known = ", ".join(f"v{v}" for v in sc.SUPPORTED_VERSIONS)
        raise InputError(f"{folder}: made under screening rules v{made_under} by faultkit {inputs.get('toolkit')}; "
                         f"this faultkit judges {known}: judge it with that version, or validate again")
    stages = cast(StagesFile, read_object(folder, "stages.json"))
    try:
        names = _window_names(stages)
    except (KeyError, TypeError, AttributeError) as e:
        raise InputError(f"{folder}/stages.json: cycles are not shaped as validate writes them ({e!r})") from None
    windows = {name: cast(Window, read_object(folder, f"windows/{name}.json")) for name in names}
    try:
        return judge(inputs, stages, windows)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError, ZeroDivisionError) as e:
        raise InputError(f"{folder}: the bundle's records are not shaped as validate writes them "
                         f"({type(e).__name__}: {e}); validate the fault again") from None


def judge(inputs: dict[str, Any], stages: StagesFile, windows: dict[str, Window]) -> Verdict:
    """The verdict of a run from its records alone (pure: no files, no clock)."""
    entry = inputs["entry"]
    rules: list[RuleRecord] = []
    by_stage = {s["stage"]: s for s in stages["stages"]}
    for stage, name in STAGE_RULES.items():
        record = by_stage.get(stage)
        if record and record["status"] != "skipped":
            rules.append(
                Rule(
                    name,
                    record["status"] == "ok",
                    record.get("measured"),
                    record.get("threshold"),
                    record.get("detail", ""),
                ).as_dict()
            )
    cycles: list[CycleVerdict] = []
    alerts_decide = alert_rule.decides(inputs)
    for cycle in stages.get("cycles", []):
        cycle_rules = _cycle_rules(inputs, cycle, windows)
        if cycle["counted"]:
            passed = all(r.passed for r in cycle_rules if decides(r.rule, alerts_decide))
            cycles.append({"index": cycle["index"], "passed": passed})
        for r in cycle_rules:
            # the uncounted first change of a config fault must still start, be ready, and be undone
            counted = cycle["counted"] or r.rule in ALWAYS_COUNTED
            rules.append({**r.as_dict(), "cycle": cycle["index"], "counted": counted})
    status = _status(rules, cycles, int(inputs["params"]["repeat"]), stages.get("aborted"))
    failed = sorted({r["rule"] for r in rules
                     if not r["passed"] and r.get("counted", True) and decides(r["rule"], alerts_decide)})
    return {
        "fault": entry["id"],
        "status": status,
        "failed_rules": failed,
        "cycles": cycles,
        "rules": rules,
        "window_s": inputs["params"]["window_s"],
        "repeat": inputs["params"]["repeat"],
        "summary": _summary(status, failed, cycles, stages.get("aborted")),
    }


ALWAYS_COUNTED = {"injection-applied", "recovery-artifact-restored", "recovery-ready"}


def decides(rule: str, alerts_decide: bool = False) -> bool:
    """Screening criteria are reported one by one, but only their disjunction decides; alert-raised
    decides where the run's inputs say the catalog asks for it (alert_rule.py)."""
    if rule == alert_rule.RULE:
        return alerts_decide
    return not sc.is_screening_criterion(rule)


def outcome(rule: RuleRecord, verdict: Verdict | dict[str, Any]) -> str:
    """How a rule's row reads: pass, FAIL, or for one that does not decide alone (a screening
    criterion, alert-raised where the catalog does not ask for it) met / not met."""
    if rule["passed"]:
        return "met" if sc.is_screening_criterion(rule["rule"]) else "pass"
    return "FAIL" if rule["rule"] in verdict.get("failed_rules", []) else "not met"


def _status(rules: list[RuleRecord], cycles: list[CycleVerdict], repeat: int, aborted: str | None) -> Status:
    if aborted:
        return "aborted"
    counted_cycles = {c["index"] for c in cycles}
    pre_ok = all(r["passed"] for r in rules if r.get("counted", True) and r.get("cycle") not in counted_cycles)
    if not pre_ok or not cycles:
        return "rejected"
    passed = sum(c["passed"] for c in cycles)
    if passed == len(cycles) and len(cycles) >= repeat:
        return "admitted"
    return "flaky" if passed else "rejected"


def _summary(status: Status, failed: list[str], cycles: list[CycleVerdict], aborted: str | None) -> str:
    if aborted:
        return f"aborted: {aborted}"
    if status == "admitted":
        return f"admitted: every rule held in {len(cycles)} of {len(cycles)} injections"
    if status == "flaky":
        held = sum(c["passed"] for c in cycles)
        return f"flaky: every rule held in {held} of {len(cycles)} injections; failed elsewhere: {', '.join(failed)}"
    return f"rejected: {', '.join(failed) or 'no injection was observed'}"


def _window_names(stages: StagesFile) -> list[str]:
    names: list[str] = []
    for cycle in stages.get("cycles", []):
        names += [n for n in (cycle.get("before"), cycle.get("after"), cycle.get("recovery")) if n]
        names += window_names(cycle)
    return sorted(set(names))


def _cycle_rules(inputs: dict[str, Any], cycle: CycleRecord, windows: dict[str, Window]) -> list[Rule]:
    entry, app = inputs["entry"], inputs["app"]
    scope = tuple(app["scope"])
    before, after = windows.get(cycle.get("before") or ""), windows.get(cycle.get("after") or "")
    recovery = windows.get(cycle.get("recovery") or "")
    inject = cycle.get("inject", {})
    rules: list[Rule] = [
        Rule(
            "injection-applied",
            inject.get("ok", False),  # a run stopped inside inject has no check of it
            inject.get("measured"),
            inject.get("threshold"),
            inject.get("detail", ""),
        )
    ]
    if not before or not after:
        return rules
    version = sc.sealed_version(inputs)  # a bundle is judged by the rules it was sealed under
    rules += _message_rules(entry, app, before, after)
    ok_after, required = sc.serving(before, after, app["entry"], version, sc.probed_service(entry))
    rules.append(
        Rule(
            "keeps-serving",
            ok_after >= required,
            ok_after,
            required,
            f"non-5xx responses per minute at {app['entry']} in the after window",
        )
    )
    rules += _screening_rules(before, after, scope, version)
    rules += alert_rule.alert_raised(before, after)
    rules.append(_intent_rule(entry, after, scope, version))
    if entry["mechanism"] == "code":
        rules.append(_new_build_serves(entry, cycle, after))
    rules += probe_rule.detects(version, before, after)
    if recovery:
        rules += _recovery_rules(inputs, cycle, before, recovery, version, windows)
    else:
        rules.append(Rule("recovery", False, None, None, "no recovery window was observed"))
    return rules


def _message_rules(entry: dict[str, Any], app: dict[str, Any], before: Window, after: Window) -> list[Rule]:
    log = entry.get("log")
    if not log:
        return []
    where = tuple(sorted({entry["target"]["service"], *app["dependants"]}))
    n_before = sc.message_count(before, log["message"], where)
    n_after = sc.message_count(after, log["message"], where)
    seen = ""
    if not n_after:  # say what was logged instead, so a misspelt message is fixed at a glance
        errors = sorted({r["message"][:100] for r in after["logs"] if r["service"] in where and r["level"] == "ERROR"})
        seen = f"; ERROR lines there instead: {errors[:3]}" if errors else "; no ERROR lines there"
    return [
        Rule("message-absent-before", n_before == 0, n_before, 0, f"{log['message']!r} in {', '.join(where)}"),
        Rule("message-present-after", n_after >= 1, n_after, 1, f"{log['message']!r} in {', '.join(where)}{seen}"),
    ]


def _screening_rules(before: Window, after: Window, scope: tuple[str, ...], version: int) -> list[Rule]:
    errors, where = sc.error_rate(after, scope, version)
    new_logs, examples = sc.new_error_log_rate(before, after, version)
    restarts, _ = sc.restarts(after, scope)
    criteria = [
        Rule(
            "screen-server-errors",
            errors >= sc.ERRORS_PER_MIN,
            errors,
            sc.ERRORS_PER_MIN,
            f"5xx per minute, largest at {where or 'none'}",
        ),
        Rule(
            "screen-new-error-logs",
            new_logs >= sc.NEW_ERROR_LOGS_PER_MIN,
            new_logs,
            sc.NEW_ERROR_LOGS_PER_MIN,
            "new error templates per minute" + (f", e.g. {examples[0]!r}" if examples else ""),
        ),
        Rule("screen-restart", restarts >= 1, restarts, 1, "instance restarts in scope during the after window"),
    ]
    held = sum(r.passed for r in criteria)
    # each criterion is reported with its figure; only "screening" (any one of them) decides
    return [*criteria, Rule("screening", held >= 1, held, 1, "screening criteria met in the after window")]


def _intent_rule(entry: dict[str, Any], after: Window, scope: tuple[str, ...], version: int) -> Rule:
    effect = entry["effect"]
    target = (entry["target"]["service"],)
    restarts, ooms = sc.restarts(after, target)
    errors, _ = sc.error_rate(after, scope, version)
    observed = f"restarts={restarts} oom_kills={ooms} errors_per_min={errors}"
    if effect == "oom-restart":
        return Rule("effect-matches-intent", ooms >= 1, observed, "an OOM kill of the target", "declared oom-restart")
    if ooms:
        return Rule(
            "effect-matches-intent",
            False,
            observed,
            "no OOM kill",
            f"declared {effect} but the target was OOM-killed: the fault diverged from its intent",
        )
    if effect == "restart":
        return Rule("effect-matches-intent", restarts >= 1, observed, "a restart of the target", "declared restart")
    if effect == "errors":
        return Rule(
            "effect-matches-intent",
            errors >= sc.ERRORS_PER_MIN,
            observed,
            f"errors_per_min >= {sc.ERRORS_PER_MIN}",
            "declared errors",
        )
    if effect == "unavailable":
        unready = any(
            not i["ready"] for s in after["samples"] for i in s["instances"].values() if i["service"] in target
        )
        return Rule(
            "effect-matches-intent",
            unready or errors >= sc.ERRORS_PER_MIN,
            observed,
            "target unready or errors",
            "declared unavailable",
        )
    return Rule("effect-matches-intent", True, observed, effect, f"declared {effect}")


def _new_build_serves(entry: dict[str, Any], cycle: CycleRecord, after: Window) -> Rule:
    new = cycle.get("inject", {}).get("build")
    service = entry["target"]["service"]
    seen = sorted({i["build"] for s in after["samples"] for i in s["instances"].values() if i["service"] == service})
    return Rule(
        "only-new-build-serves",
        seen == [new],
        len([b for b in seen if b != new]),
        0,
        f"builds of {service} seen in the after window: {', '.join(short_id(b) for b in seen)}",
    )


def _recovery_rules(inputs: dict[str, Any], cycle: CycleRecord, before: Window, recovery: Window,
                    version: int, windows: dict[str, Window]) -> list[Rule]:
    entry, app = inputs["entry"], inputs["app"]
    revert: CheckRecord = cycle["revert"] if "revert" in cycle else {"ok": False, "detail": "not reverted"}
    rules = [
        Rule(
            "recovery-artifact-restored",
            revert["ok"],
            revert.get("measured"),
            revert.get("threshold"),
            revert.get("detail", ""),
        )
    ]
    services = tuple(app["services"])
    rules.append(
        Rule(
            "recovery-ready",
            sc.all_ready(recovery, services),
            None,
            "every instance ready",
            "readiness at the end of the recovery window",
        )
    )
    ok_after, required = sc.serving(before, recovery, app["entry"], version, sc.probed_service(entry))
    rules.append(
        Rule(
            "recovery-serving",
            ok_after >= required,
            ok_after,
            required,
            f"non-5xx responses per minute at {app['entry']}",
        )
    )
    log = entry.get("log")
    if log:
        settle = recovery["samples"][0]["t"] + 0.25 * recovery["window_s"]
        tail: Window = {**recovery, "logs": [r for r in recovery["logs"] if r["ts"] >= settle]}
        where = tuple(sorted({entry["target"]["service"], *app["dependants"]}))
        n = sc.message_count(tail, log["message"], where)
        rules.append(
            Rule("recovery-message-stopped", n == 0, n, 0, "occurrences after the first quarter of the recovery window")
        )
    rules += probe_rule.recovered(version, recovery)
    rules.append(other_site_rule(inputs, cycle, windows))
    return rules


def recorded_sources(folder: Path) -> dict[str, dict[str, dict[str, object]]]:
    """Each window's `sources` by window name (rules v5: which source measured its figures), for
    people and scripts; no rule reads them. {} for a bundle sealed before v5."""
    names = _window_names(cast(StagesFile, read_object(folder, "stages.json")))
    windows = {name: read_object(folder, f"windows/{name}.json") for name in names}
    return {name: w["sources"] for name, w in windows.items() if isinstance(w.get("sources"), dict)}


def describe_sources(sources: dict[str, dict[str, object]]) -> str:
    """One line for people: `requests: scrape /metrics http_requests_total; logs: files, json`."""
    parts = []
    for signal, where in sorted(sources.items()):
        values = [str(where[k]) for k in ("kind", "source", "endpoint", "query", "metric", "format", "pattern")
                  if where.get(k)]
        parts.append(f"{signal}: {' '.join(values)}")
    return "; ".join(parts)


def verify_and_judge(folder: Path) -> tuple[Verdict, bool]:
    """Recompute a sealed bundle's verdict; True when it matches the recorded one byte for byte."""
    verify_bundle(folder)
    signer(folder)  # a signature that does not verify is tampering; trust is decided by catalog build
    verdict = judge_bundle(folder)
    recorded = read_bytes(folder, "verdict.json")
    return verdict, dumps(verdict).encode() == recorded
