"""What one observation window measured, per service: the figures labels are built from.

Pure functions of a window as the bundle stores it (samples of every instance's request counters
by status code, restarts, OOM kills, readiness; the symptom probe's result and round-trip time;
log records). The figures use the screening rules' definitions (validators/screening.py), so a
label never disagrees with the verdict about what a window measured.
"""

from __future__ import annotations

from faultkit.observe.window import Window
from faultkit.validators import screening as sc


def error_rate(window: Window, service: str, version: int = 3) -> float:
    """5xx per minute at one service, less the symptom probe's own server errors (as screening
    counts them under the bundle's rules `version`)."""
    failed = sc.probe_server_errors(window, version)
    return round(max(0.0, sc.counter_delta(window, service, "5") - failed) / sc.minutes(window), 3)


def ok_rate(window: Window, service: str, version: int = 3, probe_service: str | None = None) -> float:
    """Non-5xx per minute at one service; from rules v4 the workload's, as keeps-serving counts them."""
    return round(sc.workload_ok(window, service, version, probe_service) / sc.minutes(window), 3)


def has_requests(window: Window, service: str) -> bool:
    """Whether the service exposes a request counter at all (a store speaking its own protocol does not)."""
    return any(
        i["service"] == service and i["requests"] is not None
        for s in window["samples"]
        for i in s["instances"].values()
    )


def probe_latency_ms(window: Window) -> float | None:
    """Mean round-trip time of the symptom probe in the window: the only latency the windows sample."""
    times = [p["ms"] for p in (s["probe"] for s in window["samples"]) if p and p.get("ms") is not None]
    times += [a["ms"] for a in window.get("probes", [])]  # rules v3: the attempts on the probe's own clock
    return round(sum(times) / len(times), 1) if times else None


def probe_failures(window: Window) -> tuple[int, int]:
    return sc.probe_failures(window)


def restarts(window: Window, service: str) -> tuple[int, int]:
    """(restarts, OOM kills) of the service's instances during the window."""
    return sc.restarts(window, (service,))


def unready(window: Window, service: str) -> int:
    """The most instances of the service seen not ready in one sample of the window."""
    return max(
        (sum(1 for i in s["instances"].values() if i["service"] == service and not i["ready"])
         for s in window["samples"]),
        default=0,
    )


def error_templates(window: Window, version: int = sc.RULES_VERSION) -> dict[tuple[str, str], int]:
    """(service, masked template, as rules `version` mask it) -> ERROR records in the window."""
    out: dict[tuple[str, str], int] = {}
    for record in window["logs"]:
        if record["level"] in ("ERROR", "CRITICAL", "FATAL"):
            key = (record["service"], sc.template(record["message"], version))
            out[key] = out.get(key, 0) + 1
    return out


def new_templates(before: Window, after: Window, version: int = sc.RULES_VERSION) -> dict[tuple[str, str], float]:
    """Templates of the after window that the before window did not log, per minute."""
    old = {t for _, t in error_templates(before, version)}
    per_min = 1.0 / sc.minutes(after)
    return {k: round(n * per_min, 3) for k, n in error_templates(after, version).items() if k[1] not in old}


def services(window: Window) -> list[str]:
    return sorted({i["service"] for s in window["samples"] for i in s["instances"].values()})
