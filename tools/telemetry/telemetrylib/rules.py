"""Alert rule packs the stack's Prometheus loads (`up --rules FILE`): checked by promtool first."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path


class RulesError(Exception):
    """A rule pack Prometheus would refuse: one line naming the file."""


def packs(paths: list[Path]) -> dict[str, str]:
    """Each pack's text by the name it is loaded under, `<its folder>-<its file>` (two apps' alerts.yaml
    do not collide), after `promtool check rules` accepts it."""
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    out: dict[str, str] = {}
    for path in paths:
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as err:
            raise RulesError(f"--rules {path}: cannot read it ({err})") from None
        check = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
        if check.returncode != 0:
            lines = [ln.strip() for ln in (check.stdout + check.stderr).splitlines() if ln.strip()]
            raise RulesError(f"--rules {path}: promtool rejects it: {lines[-1][:300] if lines else 'no output'}")
        name = f"{path.resolve().parent.name}-{path.name}"
        if not name.endswith((".yml", ".yaml")):
            name += ".yaml"  # Prometheus reads rules/*.yml and rules/*.yaml
        out[name] = text
    return out


def digest(loaded: dict[str, str]) -> str:
    return hashlib.sha256("\0".join(f"{k}\0{v}" for k, v in sorted(loaded.items())).encode()).hexdigest()[:16]
