"""`alert-raised` (issue 31): the fault pages the agent. At least one alert of the app's pack fires
in the after window that did not fire in the before window, as the windows' `alerts` recorded them
(`validate --alerts`). An alert is its name and labels: the same alert firing for another service is
another alert.

It is recorded whenever both windows hold alerts. It decides admission only in runs whose inputs
say the catalog asks for it (`[validate] alert_raised = true` in faultkit.toml, recorded as
`params.alert_raised`); otherwise it is reported with its figure, as a screening criterion is.
Bundles sealed without alerts get no such rule, so their verdicts keep their bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from faultkit.errors import InputError
from faultkit.keys import CONFIG_FILE
from faultkit.observe.window import Window
from faultkit.tomlio import load_toml, table
from faultkit.validators.screening import Rule

RULE = "alert-raised"


def required(root: Path) -> bool:
    """Whether the catalog at `root` asks `alert-raised` to decide admission (default: no)."""
    value = table(load_toml(root / CONFIG_FILE), "validate", CONFIG_FILE).get("alert_raised", False)
    if not isinstance(value, bool):
        raise InputError(f"{CONFIG_FILE}: validate.alert_raised must be true or false, found {value!r}")
    return value


def decides(inputs: Mapping[str, Any]) -> bool:
    return inputs["params"].get("alert_raised") is True


def _fired(window: Window) -> set[str]:
    return {a["alert"] + ("{" + ", ".join(f"{k}={v}" for k, v in sorted(a["labels"].items())) + "}"
                          if a["labels"] else "")
            for a in window["alerts"]["alerts"] if a["state"] == "firing"}


def alert_raised(before: Window, after: Window) -> list[Rule]:
    if "alerts" not in before or "alerts" not in after:
        return []
    new = sorted(_fired(after) - _fired(before))
    read = after["alerts"]
    if new:
        detail = f"firing in the after window, not in the before window: {', '.join(new)}"
    elif read["polls"] and read["failed_polls"] == read["polls"]:
        detail = f"no poll of {read['source']} was answered: {read.get('error', '')}"
    else:
        detail = f"no alert of the pack fired that had not fired before ({read['polls']} polls)"
    return [Rule(RULE, bool(new), len(new), 1, detail)]
