"""The rule "other-site-unaffected": a fault injected in one site of a two-site app leaves the other alone.

A platform that runs the other site lets the validator observe it beside every window of the site
under fault: `windows/sites/<site>/<window>.json`, with the same samples (instances, request counters,
the symptom probe through that site's own entry), listed in the cycle record as `sites`. The rule
holds when, in the other site's after and recovery windows, against its own before window:

* no service answers 5xx at the screening rate (ERRORS_PER_MIN) or more,
* the entry service keeps serving (the keeps-serving threshold),
* every instance is ready at the end, none restarted or was OOM killed,
* the symptom probe never failed (rules v3: failed at most as often as a healthy site may).

A bundle without those windows (every bundle made before a platform ran two sites) keeps the
verdict it had: a one-site app is n/a, a two-site app "not observed", which fails.
"""

from __future__ import annotations

from typing import Any

from faultkit.observe.window import Window
from faultkit.validators import probe_rule
from faultkit.validators import screening as sc
from faultkit.validators.records import CycleRecord
from faultkit.validators.screening import Rule

RULE = "other-site-unaffected"
PHASES = ("before", "after", "recovery")


def site_window(name: str, site: str) -> str:
    """The file name (under windows/) of the other site's window observed beside window `name`."""
    return f"sites/{site}/{name}"


def window_names(cycle: CycleRecord) -> list[str]:
    """The other sites' windows a cycle record lists (none in a one-site bundle)."""
    names = [n for n in (cycle.get("before"), cycle.get("after"), cycle.get("recovery")) if n]
    return [site_window(n, site) for site in cycle.get("sites", []) for n in names]


def other_site_rule(inputs: dict[str, Any], cycle: CycleRecord, windows: dict[str, Window]) -> Rule:
    sites = inputs["app"].get("sites") or []
    if len(sites) < 2:
        return Rule(RULE, True, "n/a", None, "the app runs one site")
    observed = cycle.get("sites", [])
    if not observed:
        return Rule(RULE, False, "not observed", None, "the standby site was not observed")
    problems: list[str] = []
    figures: list[str] = []
    for site in observed:
        found, measured = _site(inputs, cycle, windows, site)
        problems += [f"{site}: {p}" for p in found]
        figures.append(f"{site}: {measured}")
    threshold = (f"< {sc.ERRORS_PER_MIN:g} 5xx/min, keeps serving, every instance ready, no restart, "
                 "the probe healthy")
    detail = "; ".join(problems) if problems else "the other site in the after and recovery windows"
    return Rule(RULE, not problems, "; ".join(figures), threshold, detail)


def _site(inputs: dict[str, Any], cycle: CycleRecord, windows: dict[str, Window], site: str) -> tuple[list[str], str]:
    app = inputs["app"]
    services = tuple(app["services"])
    before = windows.get(site_window(cycle["before"], site))
    if before is None:
        return ["no before window"], "not observed"
    problems: list[str] = []
    figures: list[str] = []
    version = sc.sealed_version(inputs)
    for phase in ("after", "recovery"):
        name = cycle.get(phase)
        if not name:
            continue
        w = windows.get(site_window(str(name), site))
        if w is None:
            problems.append(f"no {phase} window")
            continue
        errors, where = sc.error_rate(w, services, version)
        ok, required = sc.serving(before, w, app["entry"], version, sc.probed_service(inputs["entry"]))
        restarts, ooms = sc.restarts(w, services)
        failed, total = sc.probe_failures(w)
        ready = sc.all_ready(w, services)
        figures.append(f"{phase} {errors:g} 5xx/min, {ok:g} ok/min, {failed}/{total} probes failed, "
                       f"{restarts} restarts")
        if errors >= sc.ERRORS_PER_MIN:
            problems.append(f"{phase}: {errors:g} 5xx/min at {where}")
        if ok < required:
            problems.append(f"{phase}: {ok:g} ok/min at {app['entry']}, below {required:g}")
        if restarts or ooms:
            problems.append(f"{phase}: {restarts} restarts, {ooms} OOM kills")
        # rules v3 probe continuously and allow a healthy site its few failures, as probe-healthy-before does
        if failed if version < 3 else (total and not probe_rule.healthy(failed, total)):
            problems.append(f"{phase}: {failed}/{total} probes failed")
        if not ready:
            problems.append(f"{phase}: not every instance ready")
    return problems, ", ".join(figures)
