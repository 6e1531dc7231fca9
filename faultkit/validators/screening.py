"""Screening rules (SPEC.md section 3): pure functions of observation windows.

Thresholds are per minute and do not change with the window length. They screen for observable
faults; they do not measure degradation.

Definitions the rules rest on:
- server errors: 5xx responses counted by a service's own request counter, less the symptom
  probe's failed requests; the window's figure is the largest per-minute rate among the services
  in the fault's scope (counting the same failure at every hop would inflate it as it propagates).
  v3 take off one request per failed attempt; v4 every request the probe's attempts sent (setup
  steps too) that was answered 5xx or not at all.
- new error log events attributable to the change: ERROR-level records in the after window whose
  template (the message with numbers, hex strings, ids and quoted values masked) does not occur in
  the before window, per minute, over every observed service. v5 mask UUIDs before hex strings:
  v2-v4 masked hex first, which took a uuid4's first and last groups and left the letters of its
  middle ones (`<hex>-<n>b<n>d-...`), so nearly every uuid4 in a message made a template of its own
  (100 errors naming 100 orders: about 100 "new" templates); v5 make it one.
- keeps serving requests: the entry service answers at least one non-5xx request per minute, and
  at least SERVING_FRACTION of its before window's non-5xx rate. v4 count the workload's requests
  only: the probe's own answered requests at the entry service are taken off both windows.
- a restart: any instance's restart count rises during the window, or an instance of the window's
  last sample is new and its service's instances restarted (a rollout is not a restart).

Rules v5 are v4 with the UUID mask first, and windows that record which source measured each
figure (the window's `sources`: where request counts and log records were read, and in what format;
the platform's `signal_sources()`). The sources are a record for people and the judge's report, not
an input to any rule: a v2-v4 window without them is judged as it was sealed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from faultkit.observe.window import Point, ProbeAttempt, Sample, Window

# Bumped whenever a rule's computation changes: a bundle is judged by the rules it was made under,
# and the judge keeps every version in SUPPORTED_VERSIONS (v2: four probes a window, one failure
# detects; v3: the probe on its own clock and a share of failures, validators/probe_rule.py; v4: as
# v3, with every request of the probe's own taken off the counted traffic, keeps-serving included;
# v5: as v4, with the UUID mask before the hex mask and each window's signal sources recorded).
# New validations use RULES_VERSION; v2-v4 stay for judging the bundles sealed under them
# (`validate --rules 2|3|4` still makes one).
RULES_VERSION = 5
SUPPORTED_VERSIONS = (2, 3, 4, 5)
# from this version on, the probe's requests are counted one by one (the attempts' `statuses`)
EVERY_PROBE_REQUEST_FROM = 4
# from this version on, UUIDs are masked before hex strings, and windows record their `sources`
UUID_FIRST_FROM = 5
SOURCES_FROM = 5
ERRORS_PER_MIN = 4.0
NEW_ERROR_LOGS_PER_MIN = 10.0
SERVING_FRACTION = 0.25
SERVING_MIN_PER_MIN = 1.0

_QUOTED = (re.compile(r"'[^']*'|\"[^\"]*\""), "<q>")
_HEX = (re.compile(r"\b[0-9a-f]{8,}\b", re.I), "<hex>")
_UUID = (re.compile(r"\b[0-9a-f]{8}-[0-9a-f-]{27,}\b", re.I), "<uuid>")
_NUMBER = (re.compile(r"\d+(\.\d+)?"), "<n>")
# v2-v4's order, kept for judging their bundles: the hex mask takes a uuid's first and last groups,
# so the UUID mask never matches what is left and the middle groups' letters make a template each
_MASKS_V4 = (_QUOTED, _HEX, _UUID, _NUMBER)
_MASKS_V5 = (_QUOTED, _UUID, _HEX, _NUMBER)


class Samples(TypedDict):
    """What the counting rules read of a window: its samples and probe attempts (a Window is one)."""

    samples: list[Sample]
    probes: NotRequired[list[ProbeAttempt]]
    sources: NotRequired[dict[str, dict[str, object]]]  # rules v5: what measured the counts


class RuleRecord(TypedDict):
    """A rule as the verdict holds it; rules of a cycle also say which cycle and if it counted."""

    rule: str
    passed: bool
    measured: float | str | None
    threshold: float | str | None
    detail: str
    cycle: NotRequired[int]
    counted: NotRequired[bool]


SCREEN_PREFIX = "screen-"


def is_screening_criterion(rule: str) -> bool:
    """A screening criterion (screen-*) is reported with its figure, but only their disjunction,
    the rule "screening", decides a verdict: one not met is "not met", never a failure."""
    return rule.startswith(SCREEN_PREFIX)


@dataclass(frozen=True)
class Rule:
    rule: str
    passed: bool
    measured: float | str | None
    threshold: float | str | None
    detail: str

    def as_dict(self) -> RuleRecord:
        return {"rule": self.rule, "passed": self.passed, "measured": self.measured, "threshold": self.threshold,
                "detail": self.detail}


def template(message: str, version: int = RULES_VERSION) -> str:
    """The message with quoted values, ids, hex strings and numbers masked, as rules `version` mask them."""
    for pattern, mask in (_MASKS_V5 if version >= UUID_FIRST_FROM else _MASKS_V4):
        message = pattern.sub(mask, message)
    return message.strip()


def minutes(window: Window) -> float:
    samples = window["samples"]
    span = samples[-1]["t"] - samples[0]["t"] if len(samples) > 1 else window["window_s"]
    return max(span, 1e-6) / 60.0


def counter_delta(window: Samples, service: str, statuses: str) -> float:
    """Requests with a status in the class ('5' for 5xx, 'ok' for non-5xx) over the window,
    summed over the service's instances; a counter that goes down was reset by a restart."""
    total = 0.0
    previous: dict[str, float] = {}
    for sample in window["samples"]:
        for iid, inst in sample["instances"].items():
            counts = inst["requests"]
            if inst["service"] != service or counts is None:
                continue
            value = sum(v for k, v in counts.items() if (k.startswith("5") == (statuses == "5")))
            if iid in previous:
                total += value - previous[iid] if value >= previous[iid] else value
            previous[iid] = value
    return total


def rate(window: Window, service: str, statuses: str) -> float:
    return counter_delta(window, service, statuses) / minutes(window)


def error_rate(window: Window, scope: tuple[str, ...], version: int = 3) -> tuple[float, str]:
    """The largest 5xx-per-minute rate among the scope's services, and which service it was.

    The symptom probe's own server errors are taken off every service's count: the screen is
    for what the workload suffers, and in a short window the probe alone could pass it.
    """
    failed_probes = probe_server_errors(window, version)
    best = max(((max(0.0, counter_delta(window, s, "5") - failed_probes), s) for s in scope), default=(0.0, ""))
    return round(best[0] / minutes(window), 3), best[1]


def error_templates(window: Window, version: int = RULES_VERSION) -> dict[str, int]:
    out: dict[str, int] = {}
    for record in window["logs"]:
        if record["level"] in ("ERROR", "CRITICAL", "FATAL"):
            key = template(record["message"], version)
            out[key] = out.get(key, 0) + 1
    return out


def new_error_log_rate(before: Window, after: Window, version: int = RULES_VERSION) -> tuple[float, list[str]]:
    old = error_templates(before, version)
    new = {k: n for k, n in error_templates(after, version).items() if k not in old}
    return round(sum(new.values()) / minutes(after), 3), sorted(new)[:5]


def restarts(window: Samples, scope: tuple[str, ...] | None = None) -> tuple[int, int]:
    """(restarts, OOM kills) that happened during the window, over instances present throughout."""
    first, last = window["samples"][0]["instances"], window["samples"][-1]["instances"]
    r = o = 0
    for iid, inst in last.items():
        if scope and inst["service"] not in scope:
            continue
        base = first.get(iid)
        if base is None:
            continue
        r += max(0, inst["restarts"] - base["restarts"])
        o += max(0, inst["oom_kills"] - base["oom_kills"])
    return r, o


def message_count(window: Window, message: str, services: tuple[str, ...]) -> int:
    needle = message.lower()
    return sum(1 for r in window["logs"] if r["service"] in services and needle in r["message"].lower())


def serving(before: Window, after: Window, entry: str, version: int = 3,
            probe_service: str | None = None) -> tuple[float, float]:
    """Non-5xx responses per minute at the entry service: (after, required)."""
    ok_after = workload_ok(after, entry, version, probe_service) / minutes(after)
    required = max(SERVING_MIN_PER_MIN,
                   SERVING_FRACTION * workload_ok(before, entry, version, probe_service) / minutes(before))
    return round(ok_after, 3), round(required, 3)


def sealed_version(inputs: Mapping[str, Any]) -> int:
    """The rules a bundle was sealed under (its inputs.json); bundles from before the field: v2."""
    return int(inputs.get("rules_version", 2))


def probed_service(entry: Mapping[str, Any]) -> str | None:
    """The service the entry's symptom probe sends its requests to (None: it has no probe)."""
    probe = entry.get("probe")
    return probe.get("service") if isinstance(probe, Mapping) else None


def workload_ok(window: Window, service: str, version: int, probe_service: str | None) -> float:
    """Non-5xx requests at `service` over the window. From v4 the probe's own answered requests
    are taken off where it probes that service: it passes before the fault and fails after, so at
    the short windows tests use (up to 5 attempts a second, two requests each with a setup step)
    its traffic was a third of the entry's before rate, and keeps-serving read the probe's failing
    as the app's serving less (a cart outage kept 56% of the workload's answers and measured 34%)."""
    ok = counter_delta(window, service, "ok")
    if version >= EVERY_PROBE_REQUEST_FROM and service == probe_service and probe_counted(window):
        ok = max(0.0, ok - probe_requests(window)[0])
    return ok


def probe_failures(window: Samples) -> tuple[int, int]:
    """(failed, total) symptom-probe results: in the samples (v2 windows) and the attempts (v3)."""
    results = [p["ok"] for p in (s["probe"] for s in window["samples"]) if p]
    results += [a["ok"] for a in window.get("probes", [])]
    return sum(1 for ok in results if not ok), len(results)


def probe_requests(window: Samples) -> tuple[int, int]:
    """(answered below 500, answered 5xx or not at all) over every request the symptom probe's
    attempts sent in the window, setup steps included (v4 windows record them)."""
    statuses = [s for a in window.get("probes", []) for s in a.get("statuses", [])]
    server = sum(1 for s in statuses if s is None or s >= 500)
    return len(statuses) - server, server


def probe_counted(window: Samples) -> bool:
    """Whether the window's request counts include the symptom probe's own requests. They do unless
    the window's source records that they were left out (rules v5 windows record their source: read
    through PromQL, an app that marks the probe's requests has them dropped by the collector or left
    out by the query, so taking them off again hid the workload's errors: issue 31)."""
    requests = window.get("sources", {}).get("requests", {})
    return requests.get("probe_counted", True) is not False


def probe_server_errors(window: Samples, version: int = 3) -> int:
    """The probe's failed requests the app can have counted as server errors. v2 windows: every
    failed probe, as they were sealed. v3 attempts: a 5xx answer, or none (the app may have answered
    5xx after the probe gave up); a 4xx or a slow 200 is no server error and hides none of the
    workload's (v3 makes up to 40 attempts a window, so taking every failure off hid the fault).
    v4: each request of each attempt so answered, setup steps included (v3 left a failing setup
    step's 5xx in the count). None where the counts leave the probe out (probe_counted)."""
    if not probe_counted(window):
        return 0
    if version >= EVERY_PROBE_REQUEST_FROM:
        return probe_requests(window)[1]
    failed = sum(1 for p in (s["probe"] for s in window["samples"]) if p and not p["ok"])
    return failed + sum(1 for a in window.get("probes", [])
                        if not a["ok"] and (a["status"] is None or a["status"] >= 500))


def all_ready(window: Samples, services: tuple[str, ...]) -> bool:
    last = window["samples"][-1]["instances"]
    present = {inst["service"] for inst in last.values()}
    return all(s in present for s in services) and all(
        inst["ready"] for inst in last.values() if inst["service"] in services)


def points(window: Window, scope: tuple[str, ...]) -> list[Point]:
    """A per-minute series for plots: errors (largest in scope), requests and error logs per sample step."""
    out: list[Point] = []
    samples = window["samples"]
    t0 = samples[0]["t"]
    for a, b in zip(samples, samples[1:], strict=False):
        step: Samples = {"samples": [a, b]}
        per_min = 60.0 / max(b["t"] - a["t"], 1e-6)
        errors = max((counter_delta(step, s, "5") for s in scope), default=0.0) * per_min
        requests = max((counter_delta(step, s, "ok") + counter_delta(step, s, "5") for s in scope), default=0.0)
        logs = sum(1 for r in window["logs"] if a["t"] <= r["ts"] < b["t"] and r["level"] == "ERROR")
        out.append({"t": round(b["t"] - t0, 3), "errors_per_min": round(errors, 3),
                    "requests_per_min": round(requests * per_min, 3), "error_logs_per_min": round(logs * per_min, 3)})
    return out
