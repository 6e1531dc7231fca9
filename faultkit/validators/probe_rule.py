"""The symptom-probe rules, by the rules version a bundle was sealed under.

v2 (the shipped bundles): four probes a window; the probe must fail at least once in the after
window and not at all in the second half of the recovery window.

v3: the probe runs on its own clock (observe/probing.py) and the rule measures it. The benchmark
credits a repair when the probe "returns to healthy and remains healthy", so a probe that passes
part of the time during the fault would credit repairs never made. So:

- probe-detects-fault: past the after window's settling time (its first quarter), at least
  PROBE_MIN_ATTEMPTS attempts, of which at least FAIL_SHARE (90%) failed. Why 20 and 90%: a probe
  that fails at random half the time meets 18 of 20 with probability 211/2^20 (about 2e-4) in one
  cycle, and the protocol's two counted cycles square that; with 10 attempts it would be 1%.
  Attempts run one at a time (observe/probing.py), so a slow or timing-out probe makes fewer: then,
  in a window long enough for the count at the probe's period, failing attempts that cover
  COVERED_SHARE (90%) of the judged time stand for the count (the probe was failing all along, not
  by luck at a few moments); a window too short for the count is too short, however it covers. A
  failing attempt covers the time from its start until the prober starts the next one (its own
  duration or the period, whichever is longer, plus HOLD_SLACK_S of wake-up; the last one up to the
  window's end; one in flight when judging starts, from then): so failing attempts in a row cover
  all of it, quick or slow, a few quick ones far apart cover little, and every attempt that passes
  in between takes its time out.
- probe-healthy-before: at most HEALTHY_MAX_FAIL_SHARE (5%) of the before window's attempts failed
  (the symptom must not be there already; one timeout on a shared machine is not a symptom).
- recovery-probe-healthy: the same bound over the second half of the recovery window.
"""

from __future__ import annotations

from faultkit.observe.probing import PROBE_MIN_ATTEMPTS, SETTLE_FRACTION
from faultkit.observe.window import ProbeAttempt, Window
from faultkit.validators import screening as sc
from faultkit.validators.screening import Rule

FAIL_SHARE = 0.9
COVERED_SHARE = 0.9
HEALTHY_MAX_FAIL_SHARE = 0.05
HOLD_SLACK_S = 0.05  # from one attempt's end to the next one's start: the prober thread's wake-up, loaded


def detects(version: int, before: Window, after: Window) -> list[Rule]:
    return _detects_v2(before, after) if version < 3 else _detects_v3(before, after)


def recovered(version: int, recovery: Window) -> list[Rule]:
    return _recovered_v2(recovery) if version < 3 else _recovered_v3(recovery)


def _detects_v2(before: Window, after: Window) -> list[Rule]:
    failed_before, n_before = sc.probe_failures(before)
    failed_after, n_after = sc.probe_failures(after)
    if not n_before and not n_after:
        return []
    return [
        Rule(
            "probe-detects-fault",
            failed_after >= 1,
            f"{failed_after}/{n_after} failed",
            ">= 1 failure",
            f"symptom probe failed {failed_before}/{n_before} before",
        )
    ]


def _recovered_v2(recovery: Window) -> list[Rule]:
    failed, total = sc.probe_failures({"samples": recovery["samples"][len(recovery["samples"]) // 2 :]})
    if not total:
        return []
    return [Rule("recovery-probe-healthy", failed == 0, f"{failed}/{total} failed", "0 failures",
                 "symptom probe over the second half of the recovery window")]


def attempts_since(window: Window, fraction: float) -> list[ProbeAttempt]:
    """The window's probe attempts that started after `fraction` of its length."""
    since = window["start"] + fraction * window["window_s"]
    return [a for a in window.get("probes", []) if a["t"] >= since]


def tally(attempts: list[ProbeAttempt]) -> tuple[int, int]:
    """(failed, attempts)."""
    return sum(1 for a in attempts if not a["ok"]), len(attempts)


def failing_share(attempts: list[ProbeAttempt], since: float, end: float, period: float) -> float:
    """The share of [since, end] that failing attempts cover, each from its start until the prober
    starts the next (an attempt still in flight at `since` counts from there)."""
    if end <= since:
        return 0.0
    starts = [a["t"] for a in attempts[1:]] + [end]
    failing = 0.0
    for a, nxt in zip(attempts, starts, strict=True):
        if not a["ok"]:
            held = min(nxt, end, a["t"] + max(a["ms"] / 1000, period) + HOLD_SLACK_S)
            failing += max(0.0, held - max(a["t"], since))
    return failing / (end - since)


def _share(failed: int, total: int) -> str:
    return f"{failed}/{total} failed ({failed / total:.0%})" if total else "0 attempts"


def healthy(failed: int, total: int) -> bool:
    return total > 0 and failed <= HEALTHY_MAX_FAIL_SHARE * total


def _detects_v3(before: Window, after: Window) -> list[Rule]:
    if "probes" not in after and "probes" not in before:
        return []  # an entry without a probe (none in this catalog): nothing to measure
    failed_b, n_b = tally(attempts_since(before, 0.0))
    judged = attempts_since(after, SETTLE_FRACTION)
    failed_a, n_a = tally(judged)
    slow = sum(1 for a in judged if a.get("slow"))
    since, period = after["start"] + SETTLE_FRACTION * after["window_s"], after.get("probe_period_s", 0.0)
    covered = failing_share(after.get("probes", []), since, after["start"] + after["window_s"], period)
    # the window was sized for the count at the probe's period: slow attempts, not a short window, made fewer
    planned = after["window_s"] * (1 - SETTLE_FRACTION) / period if period else 0.0
    enough = n_a >= PROBE_MIN_ATTEMPTS or (n_a > 0 and planned >= PROBE_MIN_ATTEMPTS and covered >= COVERED_SHARE)
    return [
        Rule(
            "probe-healthy-before",
            healthy(failed_b, n_b),
            _share(failed_b, n_b),
            f"<= {HEALTHY_MAX_FAIL_SHARE:.0%} failed",
            "symptom probe over the before window",
        ),
        Rule(
            "probe-detects-fault",
            enough and failed_a >= FAIL_SHARE * n_a,
            _share(failed_a, n_a),
            f">= {FAIL_SHARE:.0%} failed of >= {PROBE_MIN_ATTEMPTS} attempts, or of attempts failing back to back "
            f"over >= {COVERED_SHARE:.0%} of the judged time",
            f"symptom probe after the first {SETTLE_FRACTION:.0%} of the after window (settling), "
            f"every {after.get('probe_period_s', 0):g}s; {slow} too slow; failures cover {covered:.0%} of it"
            + ("" if enough else "; too few attempts to judge: use a longer window"),
        ),
    ]


def _recovered_v3(recovery: Window) -> list[Rule]:
    if "probes" not in recovery:
        return []
    failed, total = tally(attempts_since(recovery, 0.5))
    return [Rule("recovery-probe-healthy", healthy(failed, total), _share(failed, total),
                 f"<= {HEALTHY_MAX_FAIL_SHARE:.0%} failed",
                 "symptom probe over the second half of the recovery window")]
