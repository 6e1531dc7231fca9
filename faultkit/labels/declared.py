"""Check an entry's hand-written `evidence:` against what its admitting bundle's labels saw move.

A declared metric (a PromQL-like selector over the request series named in legacy_counter.py, such
as `<series>{service="cart",status="500"}`, or a phrase such as "server errors of checkout") is
matched by the service it names and the kind of signal it means (errors, latency, restarts,
readiness, request rate); a declared log keyword is matched against the new error templates.
Whatever matches nothing is a finding, with the observed signals suggested in its place. Returns
data; catalog lint renders it (the hook is in lint.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from faultkit.labels.legacy_counter import REQUESTS_SERIES
from faultkit.validators.screening import template

SELECTOR = re.compile(r"^\s*([A-Za-z_:][\w:]*)\s*\{(.*)\}\s*$")
LABEL = re.compile(r'(\w+)\s*=~?\s*"([^"]*)"')
# words of a phrase -> the kinds of moved signal that carry them
KINDS = (
    (("latency", "slow", "duration", "delay", "time"), {"latency"}),
    (("error", "errors", "5xx", "500", "503", "fail", "failed", "failures"), {"5xx"}),
    (("restart", "restarts", "crash", "killed", "kill"), {"restart"}),
    (("oom", "memory"), {"oom-kill"}),
    (("ready", "readiness", "unready", "unavailable"), {"unready"}),
    (("request", "requests", "throughput", "rate", "traffic"), {"5xx", "non-5xx", "latency"}),
)
UNSAMPLED = ("cpu", "throttl", "disk", "gc", "connection", "queue", "saturation")


@dataclass(frozen=True)
class EvidenceFinding:
    path: str  # field path in the entry, e.g. evidence.metrics[1]
    declared: str
    message: str


def observed(labels: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(service, kind, how to write it) for every signal that moved in every counted cycle."""
    out = []
    for s in labels["evidence"]["metrics"]:
        if s["metric"] == "probe_latency_ms":
            out.append((s["service"], "latency", f'probe_latency_ms{{service="{s["service"]}",route="{s["route"]}"}}'))
        else:
            out.append((s["service"], s["status"], f'{REQUESTS_SERIES}{{service="{s["service"]}",'
                                                   f'status="{s["status"]}"}} ({s["direction"]})'))
    for e in labels["evidence"]["events"]:
        if all(c["count"] > c["before"] for c in e["cycles"]):
            out.append((e["service"], e["kind"], f'{e["kind"]} of {e["service"]}'))
    return out


def _wanted(text: str, services: set[str]) -> tuple[set[str], set[str]]:
    """(services named, kinds meant) by a declared metric."""
    m = SELECTOR.match(text)
    if m:
        name, body = m.group(1), dict(LABEL.findall(m.group(2)))
        named = {body["service"]} if "service" in body else set()
        status = body.get("status", "")
        if "latency" in name or "duration" in name:
            return named, {"latency"}
        if "restart" in name:
            return named, {"restart"}
        if status:
            return named, {"5xx"} if status.startswith("5") else {"non-5xx"}
        return named, {"5xx", "non-5xx"}
    words = set(re.findall(r"[a-z0-9]+", text.lower()))
    kinds: set[str] = set()
    for keys, meant in KINDS:
        if words & set(keys):
            kinds |= meant
            break  # the first kind a phrase names is what it is about ("request latency" is latency)
    return words & services, kinds


def check_declared(entry: dict[str, Any], labels: dict[str, Any]) -> list[EvidenceFinding]:
    """Findings for every declared metric or log keyword that never moved in the labels."""
    seen = observed(labels)
    services = {s for s, _, _ in seen} | {step["service"] for step in labels["chain"]}
    # rises first: they are what a declared "server errors of ..." usually meant
    ranked = sorted({w for _, _, w in seen}, key=lambda w: ("(up)" not in w and "probe" not in w, w))
    suggestions = "; observed instead: " + (", ".join(ranked[:4]) or "nothing moved")
    alerts = labels["evidence"].get("alerts")
    raised = sorted({a["alert"].split("{")[0] for a in alerts or []})  # alert names, as evidence may declare them
    out = []
    for i, text in enumerate(entry.get("evidence", {}).get("metrics", [])):
        if any(name in text for name in raised):
            continue
        named, kinds = _wanted(text, services)
        callers = re.search(r"callers of (\w+)", text.lower())
        if callers:  # "server errors of callers of cart": any service the chain runs through but cart
            named = {step["service"] for step in labels["chain"]} - {callers.group(1)}
        hit = any((not named or s in named) and k in kinds for s, k, _ in seen)
        if not hit:
            why = " (the windows do not sample it)" if any(u in text.lower() for u in UNSAMPLED) else ""
            out.append(EvidenceFinding(f"evidence.metrics[{i}]", text,
                                       f"{text!r} never moved in the admitting bundle{why}{suggestions}"))
    templates = [t["template"].lower() for t in labels["evidence"]["logs"]]
    logged = sorted({t["template"] for t in labels["evidence"]["logs"]})
    for i, text in enumerate(entry.get("evidence", {}).get("logs", [])):
        needle = template(text).lower()
        if not any(needle in t for t in templates):
            hint = "; new error templates: " + (", ".join(repr(t) for t in logged[:3]) or "none")
            out.append(EvidenceFinding(f"evidence.logs[{i}]", text,
                                       f"{text!r} is in no new error log of the admitting bundle{hint}"))
    out.extend(_alert_findings(entry.get("evidence", {}), alerts, raised))
    return out


def _alert_findings(declared: dict[str, Any], alerts: list[dict[str, Any]] | None,
                    raised: list[str]) -> list[EvidenceFinding]:
    """What the agent sees is the pack's alerts: a bundle that recorded them (`validate --alerts`) and
    raised none, or raised some the declared evidence names none of, is a finding. None: not recorded."""
    if alerts is None:
        return []
    if not alerts:
        return [EvidenceFinding("evidence", "", "the admitting bundle recorded the alert pack and no alert fired "
                                                "that had not fired before: the agent would see no alert")]
    words = " ".join(str(t) for kind in ("metrics", "logs", "traces") for t in declared.get(kind, []))
    if any(name in words for name in raised):
        return []
    return [EvidenceFinding("evidence", "", f"names no alert that fired in the admitting bundle; raised: "
                                            f"{', '.join(a['alert'] for a in alerts[:4])}")]
