"""Make entries admitted the way `faultkit validate` does: a sealed, signed bundle that judge
recomputes to the recorded verdict, and a validation block that names it.

The windows are synthetic but shaped exactly as the sampler writes them, so `catalog build`
re-judges them like any real bundle. Shared by tests/release, tests/gate, tests/report and
tests/hostile (imported as tests.release.admit).
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

from faultkit import __version__
from faultkit.apps.descriptor import load_app
from faultkit.bundles import BundleWriter, dumps
from faultkit.catalog.bindings import bindings
from faultkit.catalog.model import entry_from_data
from faultkit.catalog.release import Custody, entry_digest
from faultkit.keys import fingerprint, signing_key
from faultkit.validators import screening
from faultkit.validators.judge import judge_bundle
from faultkit.workspace import Workspace
from tests.factories import write_entry

START = 1767225600.0  # 2026-01-01T00:00:00Z
OLD_BUILD = "sha256:" + "a" * 64
NEW_BUILD = "sha256:" + "b" * 64
STEP = 1.0
SAMPLES = 6


def app_info(ws: Workspace, data: dict[str, Any]) -> dict[str, Any]:
    app = load_app(ws, data["app"])
    target = data["target"]["service"]
    return {"name": app.name, "version": app.version, "entry": app.entry, "services": list(app.observed),
            "scope": list(app.scope(target)), "dependants": list(app.callers(target)), "sites": []}


def window(name: str, start: float, data: dict[str, Any], info: dict[str, Any], sick: bool,
           build: str = OLD_BUILD, rules_version: int = 2, length: int = SAMPLES) -> dict[str, Any]:
    """Samples of every service; `sick`: the target answers 5xx, logs the message, the probe fails.
    Rules v2 put the probe in the samples; v3 runs it on its own clock (`probes`, every 0.2 s)."""
    target = data["target"]["service"]
    samples, logs = [], []
    for i in range(length):
        t = start + i * STEP
        instances = {}
        for s in info["services"]:
            failing = sick and s == target
            requests = {"200": 100.0 * i, **({"500": 10.0 * i} if failing else {})}
            instances[f"{s}-0"] = {"build": build if s == target else OLD_BUILD, "oom_kills": 0, "ready": True,
                                   "requests": requests, "restarts": 0, "service": s}
        probe = {"ms": 5, "ok": not sick, "status": 500 if sick else 200} if rules_version < 3 else None
        samples.append({"instances": instances, "probe": probe, "t": t})
        if sick and data.get("log"):
            logs += [{"instance": f"{data['log']['service']}-0", "level": "ERROR", "message": data["log"]["message"],
                      "service": data["log"]["service"], "ts": t + k / 10} for k in range(5)]
    w: dict[str, Any] = {"name": name, "start": start, "end": start + len(samples) * STEP, "interval_s": STEP,
                         "window_s": len(samples) * STEP, "samples": samples, "logs": logs}
    if rules_version >= 3:
        w["probe_period_s"] = 0.2
        w["probes"] = [{"t": round(start + k * 0.2, 3), "status": 500 if sick else 200, "ok": not sick, "ms": 5}
                       for k in range(int(len(samples) * STEP / 0.2))]
    return {**w, "points": screening.points(w, tuple(info["scope"]))}


def window_alerts(win: dict[str, Any], service: str, firing: bool) -> dict[str, Any]:
    at = win["start"] + 4
    rows = [{"alert": "ServiceErrorRatioHigh", "labels": {"service_name": service}, "state": "firing",
             "active_at": at - 2, "first_seen": at - 2, "last_seen": win["end"], "firing_seen": at}] if firing else []
    return {"source": "http://127.0.0.1:9090", "polls": int(win["window_s"]), "failed_polls": 0, "alerts": rows}


def make_bundle(ws: Workspace, data: dict[str, Any], status: str = "admitted", run: str = "run-1",
                root: Path | None = None, rules_version: int = 2, start: float = START,
                samples: int = SAMPLES, bound: bool = False, alerts: bool = False) -> tuple[str, str]:
    """Seal and sign evidence/<id>/<run>/ for `data`; `status` "admitted" shows the symptom in every
    after window, anything else in none (judge then rejects). Returns (folder relative to root, digest).
    The windows are shaped as the sampler of `rules_version` writes them: v2 by default, the rules
    the shipped bundles were sealed under (a v2 admission needs no second verdict). `samples`: the
    window's length in seconds (one sample a second), recorded as the run's window. `bound`: seal the
    bindings (descriptor, source, build, rules) as the validator does since issue 32. `alerts`: each
    window records the pack's alerts as `validate --alerts` does, the target's error alert firing 4 s
    into every sick window."""
    body = {k: v for k, v in copy.deepcopy(data).items() if k != "validation"}
    folder = (root or ws.evidence_dir) / body["id"] / run
    info = app_info(ws, body)
    code = body.get("mechanism") == "code"
    w = BundleWriter(folder)
    patch = None
    if code:
        text = (ws.root / body["code"]["patch"]).read_text()
        patch = {"path": body["code"]["patch"], "digest": "sha256:" + hashlib.sha256(text.encode()).hexdigest()}
        w.write_text("patch.diff", text)
    w.write("inputs.json", {
        "entry": body, "entry_digest": entry_digest(entry_from_data(body)), "patch": patch, "app": info,
        "platform": "local", "toolkit": __version__, "rules_version": rules_version,
        "params": {"window_s": samples * STEP, "interval_s": STEP, "repeat": 2, "thresholds": {}},
        **({"bindings": bindings(ws, entry_from_data(body))} if bound else {}),
    })
    sick = status == "admitted"
    cycles = []
    t = start
    for index in (1, 2):
        inject = {"ok": True, "detail": "applied", **({"build": NEW_BUILD} if code else {})}
        cycles.append({"index": index, "counted": True, "before": f"before-{index}", "after": f"after-{index}",
                       "recovery": f"recovery-{index}", "inject": inject, "revert": {"ok": True, "detail": "restored"}})
        v = rules_version
        windows = {"before": window(f"before-{index}", t, body, info, False, rules_version=v, length=samples),
                   "after": window(f"after-{index}", t + 10, body, info, sick, NEW_BUILD, v, samples),
                   "recovery": window(f"recovery-{index}", t + 20, body, info, False, rules_version=v,
                                      length=samples)}
        for kind, win in windows.items():
            if alerts:
                win["alerts"] = window_alerts(win, body["target"]["service"], sick and kind == "after")
            w.write(f"windows/{kind}-{index}.json", win)
        t += 30
    w.write("stages.json", {"aborted": None, "cycles": cycles, "stages": [
        {"stage": "lint", "status": "ok", "measured": 0, "threshold": 0, "detail": "clean"}]})
    w.write_text("verdict.json", dumps(judge_bundle(folder)))
    return folder.relative_to(ws.root).as_posix(), w.seal()


def admit(
    ws: Workspace,
    data: dict[str, Any],
    status: str = "admitted",
    bundle: bool = True,
    at: str = "2026-01-01T00:05:00Z",
    bound: bool = False,
) -> dict[str, Any]:
    """Write `data` as an entry validated with `status`; returns the data written."""
    data = copy.deepcopy(data)
    data.pop("validation", None)
    if bundle:
        folder, digest = make_bundle(ws, data, status, bound=bound)
    else:
        folder, digest = None, "sha256:" + hashlib.sha256(data["id"].encode()).hexdigest()
    v: dict[str, Any] = {
        "verdict": status,
        "bundle_digest": digest,
        "at": at,
        "platform": "local",
        "entry_digest": entry_digest(entry_from_data(data)),
        "window_s": SAMPLES * STEP,
        "repeat": 2,
    }
    if folder:
        v["bundle"] = folder
    if status != "admitted":
        v["failed_rules"] = ["screening"]
    if data.get("code"):
        v["patch_digest"] = "sha256:" + hashlib.sha256((ws.root / data["code"]["patch"]).read_bytes()).hexdigest()
    data["validation"] = v
    write_entry(ws, data)
    return data


def custody() -> Custody:
    """What `catalog build` uses when no [trust] list is set: the real judge and this user's key
    (the temporary one the test suite's FAULTKIT_CONFIG_DIR holds)."""
    return Custody(judge=judge_bundle, trusted=frozenset({fingerprint(signing_key(None).public_key())}))


def relpath(path: Path, ws: Workspace) -> str:
    return path.relative_to(ws.root).as_posix()
