"""Small hand-built observation windows, stage records and inputs for the pure screening and judge
tests: the shapes the sampler and the stage log write into a bundle, with figures chosen by hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from faultkit.observe.window import InstanceSample, LogLine, ProbeResult, Sample, Window

SPAN_S = 60.0  # every window below spans exactly one minute, so counts are per-minute rates


def instance(service: str, ok: float = 0, errors: float = 0, *, ready: bool = True, restarts: int = 0,
             oom_kills: int = 0, build: str = "sha256:base") -> InstanceSample:
    return {"service": service, "build": build, "ready": ready, "restarts": restarts, "oom_kills": oom_kills,
            "requests": {"200": float(ok), "500": float(errors)}}


def log(t: float, service: str, message: str, level: str = "ERROR") -> LogLine:
    return {"ts": t, "service": service, "instance": f"{service}-0", "level": level, "message": message}


def window(name: str, rates: dict[str, tuple[float, float]], *, t0: float = 1000.0, logs: Sequence[LogLine] = (),
           last: dict[str, Any] | None = None, probes: Sequence[bool] = ()) -> Window:
    """Three samples over one minute; `rates` is {service: (non-5xx per min, 5xx per min)}. `last`
    overrides fields of instances in the last sample ({instance id: {field: value}}); `probes`
    puts symptom-probe results (ok or not) on the first samples."""
    samples: list[Sample] = []
    for k, t in enumerate((t0, t0 + SPAN_S / 2, t0 + SPAN_S)):
        share = k / 2
        instances = {f"{s}-0": instance(s, ok * share, err * share) for s, (ok, err) in sorted(rates.items())}
        if k == 2:
            for iid, fields in (last or {}).items():
                instances[iid] = {**instances.get(iid, instance(iid.rsplit("-", 1)[0])), **fields}
        probe: ProbeResult | None = None
        if k < len(probes):
            probe = {"status": 200 if probes[k] else 500, "ok": probes[k], "ms": 5}
        samples.append({"t": t, "instances": instances, "probe": probe})
    return {"name": name, "start": t0, "end": t0 + SPAN_S, "window_s": SPAN_S, "interval_s": SPAN_S / 2,
            "samples": samples, "logs": [{**r, "ts": t0 + r["ts"]} for r in logs]}


HEALTHY = {"frontend": (120.0, 0.0), "cart": (60.0, 0.0)}
FAILING = {"frontend": (100.0, 12.0), "cart": (40.0, 12.0)}
MESSAGE = "cart store request failed"


def inputs(*, mechanism: str = "direct", effect: str = "errors", repeat: int = 1, message: str | None = MESSAGE,
           sites: Sequence[str] = ()) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": "t-fault", "mechanism": mechanism, "effect": effect,
                             "target": {"service": "cart"}}
    if message:
        entry["log"] = {"message": message, "service": "cart"}
    return {
        "entry": entry,
        "app": {"name": "shop", "entry": "frontend", "services": ["cart", "frontend"], "scope": ["cart", "frontend"],
                "dependants": ["frontend"], "sites": list(sites)},
        "params": {"window_s": SPAN_S, "interval_s": SPAN_S / 2, "repeat": repeat},
    }


def failing_after(t: float = 0.0) -> list[LogLine]:
    """A dozen error lines with the entry's message, one template, from `t` seconds in."""
    return [log(t + i, "cart", f"{MESSAGE}: dial cartstore:6380 attempt {i}") for i in range(12)]


def cycle(index: int, windows: dict[str, Window], *, counted: bool = True, inject_ok: bool = True,
          revert_ok: bool = True, after: Window | None = None, before: Window | None = None,
          recovery: Window | None = None) -> dict[str, Any]:
    """A cycle record, adding its three windows to `windows` (a healthy-failing-healthy cycle by default)."""
    t0 = 1000.0 + index * 1000
    names = {"before": f"before-{index}", "after": f"after-{index}", "recovery": f"recovery-{index}"}
    windows[names["before"]] = before or window(names["before"], HEALTHY, t0=t0)
    windows[names["after"]] = after or window(names["after"], FAILING, t0=t0 + 100, logs=failing_after())
    windows[names["recovery"]] = recovery or window(names["recovery"], HEALTHY, t0=t0 + 200)
    check = {"measured": "started", "threshold": "started", "detail": "instance-failure on cart"}
    return {"index": index, "counted": counted, **names, "inject": {"ok": inject_ok, **check},
            "revert": {"ok": revert_ok, "measured": "stopped", "threshold": "stopped", "detail": "stopped"}}


def stages(cycles: list[dict[str, Any]], *, aborted: str | None = None, lint_ok: bool = True) -> dict[str, Any]:
    records = [{"stage": "lint", "status": "ok" if lint_ok else "failed", "detail": "clean", "at": 1.0,
                "measured": 0 if lint_ok else 1, "threshold": 0}]
    for name in ("patch", "build", "marker"):
        records.append({"stage": name, "status": "skipped", "detail": "", "at": 1.0})
    if lint_ok:
        records.append({"stage": "baseline", "status": "ok", "detail": "2 instances ready", "at": 2.0,
                        "build": None, "measured": 0, "threshold": 0})
    return {"stages": records, "cycles": cycles, "aborted": aborted, "current": None}
