"""A running minishop in a throwaway workspace holding the shipped catalog, patches and release,
for the replay tests; and the application's state a run must leave as it found it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from faultkit.platforms.local import LocalPlatform
from faultkit.schedules import document
from faultkit.workspace import Workspace
from tests.helpers.cli import FAULTKIT, run_cli
from tests.validators import shop

REPO = shop.REPO


def make(root: Path) -> tuple[Workspace, LocalPlatform]:
    ws = shop.make_workspace(root)
    for folder in ("catalog", "patches"):
        shutil.rmtree(root / folder)
    for folder in ("catalog", "patches", "dist"):
        shutil.copytree(REPO / folder, root / folder)
    return ws, shop.start(ws)


def faultkit(ws: Workspace, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=ws.root, env=shop.env_for(ws), timeout=timeout)


def popen(ws: Workspace, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*FAULTKIT, *args], cwd=ws.root, env=shop.env_for(ws),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def state(platform: LocalPlatform, doc: dict[str, Any]) -> dict[str, Any]:
    """Builds per service, every scheduled setting, and the actions in force."""
    release = json.loads((platform.workspace.dist_dir / f"catalog-{doc['release']['version']}.json").read_text())
    entries = {e["id"]: e for e in release["entries"]}
    settings = {}
    for fault in sorted({e["fault"] for e in doc["events"]}):
        c = entries[fault].get("config")
        if c:
            settings[f"{c['workload']}/{c['container']}/{c['field']}"] = platform.read_field(
                c["workload"], c["container"], c["field"])
    builds: dict[str, list[str]] = {}
    for i in platform.instances():
        builds.setdefault(i.service, []).append(i.build)
    return {"builds": {s: sorted(b) for s, b in sorted(builds.items())}, "settings": settings,
            "actions": sorted(platform.active_actions())}


def hand_made(base: dict[str, Any], invocations: int, events: list[tuple[int, str, str]]) -> dict[str, Any]:
    """A schedule of the base's release with the given (invocation, op, fault) events."""
    cases: dict[str, int] = {}
    rows = []
    for k, op, fault in events:
        case = cases.setdefault(fault, len(cases) + 1)
        rows.append({"artifact": f"minishop/{fault}", "case": case, "category": "code-bug", "fault": fault,
                     "invocation": k, "op": op, "t": k * 120})
    doc = {**base, "events": rows, "stats": {**base["stats"], "invocations": invocations}}
    assert document.problems(doc) == []
    return doc
