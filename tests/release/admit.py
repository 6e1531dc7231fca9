"""Make entries admitted the way `faultkit validate` does: a sealed bundle and a validation block.

Shared by tests/release, tests/gate and tests/report (imported as tests.release.admit).
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

from faultkit.catalog.model import entry_from_data
from faultkit.catalog.release import entry_digest
from faultkit.validators.bundle import BundleWriter
from faultkit.workspace import Workspace
from tests.factories import write_entry

START = 1767225600.0  # 2026-01-01T00:00:00Z


def window(name: str, start: float, errors: float, logs: float, rpm: float = 60.0, n: int = 6) -> dict[str, Any]:
    step = 10.0
    points = [
        {
            "t": i * step,
            "requests_per_min": rpm + (i % 3),
            "errors_per_min": errors + (i % 2) * 0.5,
            "error_logs_per_min": logs,
        }
        for i in range(n)
    ]
    return {
        "name": name,
        "start": start,
        "end": start + n * step,
        "window_s": n * step,
        "points": points,
    }


def rules(status: str) -> list[dict[str, Any]]:
    ok = status == "admitted"
    return [
        {
            "rule": "serving",
            "passed": True,
            "measured": 60.0,
            "threshold": 1.0,
            "detail": "requests/min after",
        },
        {
            "rule": "server-errors",
            "passed": ok,
            "measured": 6.25 if ok else 0.25,
            "threshold": 4.0,
            "detail": "server errors/min after (>= 4)",
        },
        {
            "rule": "log-signature",
            "passed": ok,
            "measured": "absent before, present after" if ok else "absent after",
            "threshold": "absent before, present after",
            "detail": "log message",
        },
    ]


def make_bundle(ws: Workspace, fault: str, status: str = "admitted", run: str = "run-1") -> tuple[str, str]:
    """Seal a bundle under evidence/<fault>/<run>/; returns (folder relative to root, digest)."""
    folder = ws.evidence_dir / fault / run
    w = BundleWriter(folder)
    w.write("inputs.json", {"fault": fault, "platform": "local", "window_s": 60})
    w.write("stages.json", [{"stage": "inject", "ok": True}])
    errors_after = 6.0 if status == "admitted" else 0.0
    w.write("windows/before-1.json", window("before-1", START, 0.0, 0.0))
    w.write(
        "windows/after-1.json",
        window("after-1", START + 120, errors_after, 12.0 if errors_after else 0.0),
    )
    w.write("windows/recovery-1.json", window("recovery-1", START + 240, 0.0, 0.0))
    w.write(
        "verdict.json",
        {"fault": fault, "status": status, "rules": rules(status), "window_s": 60, "repeat": 1},
    )
    return folder.relative_to(ws.root).as_posix(), w.seal()


def admit(
    ws: Workspace,
    data: dict[str, Any],
    status: str = "admitted",
    bundle: bool = True,
    at: str = "2026-01-01T00:05:00Z",
) -> dict[str, Any]:
    """Write `data` as an entry validated with `status`; returns the data written."""
    data = copy.deepcopy(data)
    data.pop("validation", None)
    if bundle:
        folder, digest = make_bundle(ws, data["id"], status)
    else:
        folder, digest = None, "sha256:" + hashlib.sha256(data["id"].encode()).hexdigest()
    v: dict[str, Any] = {
        "verdict": status,
        "bundle_digest": digest,
        "at": at,
        "platform": "local",
        "entry_digest": entry_digest(entry_from_data(data)),
        "window_s": 60,
        "repeat": 1,
    }
    if folder:
        v["bundle"] = folder
    if status != "admitted":
        v["failed_rules"] = [r["rule"] for r in rules(status) if not r["passed"]]
    if data.get("code"):
        v["patch_digest"] = "sha256:" + hashlib.sha256((ws.root / data["code"]["patch"]).read_bytes()).hexdigest()
    data["validation"] = v
    write_entry(ws, data)
    return data


def relpath(path: Path, ws: Workspace) -> str:
    return path.relative_to(ws.root).as_posix()
