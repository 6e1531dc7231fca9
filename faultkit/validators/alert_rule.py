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
from faultkit.keys import CONFIG_FILE, committed_text
from faultkit.observe.alerts import AlertRecord
from faultkit.observe.window import Window
from faultkit.tomlio import load_toml, parse_toml, table
from faultkit.validators.screening import Rule

RULE = "alert-raised"


def required(root: Path, revision: str | None = None) -> bool:
    """Whether the catalog at `root` asks `alert-raised` to decide admission (default: no); with
    `revision`, as faultkit.toml is committed there (the gate's base: a pull request cannot turn it off)."""
    where = CONFIG_FILE if revision is None else f"{revision}:{CONFIG_FILE}"
    if revision is None:
        config = load_toml(root / CONFIG_FILE)
    else:
        text = committed_text(root, revision, CONFIG_FILE)
        config = parse_toml(text, where) if text is not None else {}
    value = table(config, "validate", where).get("alert_raised", False)
    if not isinstance(value, bool):
        raise InputError(f"{where}: validate.alert_raised must be true or false, found {value!r}")
    return value


def decides(inputs: Mapping[str, Any]) -> bool:
    return inputs["params"].get("alert_raised") is True


def alert_name(alert: AlertRecord) -> str:
    """`name{label=value, ...}`, or the name alone without labels."""
    labels = alert["labels"]
    return alert["alert"] + ("{" + ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) + "}" if labels else "")


def fired(window: Window) -> set[str]:
    """Every alert that fired in the window, by its alert_name."""
    return {alert_name(a) for a in window["alerts"]["alerts"] if a["state"] == "firing"}


def raised(before: Window, after: Window) -> list[str]:
    """The alerts that fired in the after window and not in the before window."""
    return sorted(fired(after) - fired(before))


def alert_raised(before: Window, after: Window) -> list[Rule]:
    if "alerts" not in before or "alerts" not in after:
        return []
    new = raised(before, after)
    read = after["alerts"]
    if new:
        detail = f"firing in the after window, not in the before window: {', '.join(new)}"
    elif read["polls"] and read["failed_polls"] == read["polls"]:
        detail = f"no poll of {read['source']} was answered: {read.get('error', '')}"
    else:
        detail = f"no alert of the pack fired that had not fired before ({read['polls']} polls)"
    return [Rule(RULE, bool(new), len(new), 1, detail)]
