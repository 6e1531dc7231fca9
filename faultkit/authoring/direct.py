"""Direct faults: one of the fixed interventions of vocab.ACTIONS, with typed, range-checked params."""

from __future__ import annotations

from typing import Any

from faultkit.apps.descriptor import AppDescriptor, load_app, suggest
from faultkit.authoring.common import (
    EFFECT_TODO,
    catalog_entries,
    check_id,
    entry_probe,
    free_id,
    service_aliases,
    skeleton,
)
from faultkit.catalog.model import entry_from_data
from faultkit.catalog.vocab import ACTIONS, Action, Param
from faultkit.errors import InputError
from faultkit.workspace import Workspace

# What each action is expected to show; None where it depends on the application (author decides).
EFFECTS: dict[str, str | None] = {
    "cpu-stress": None, "memory-stress": None, "instance-kill": "restart", "instance-failure": "errors",
    "network-delay": "errors", "network-loss": "errors", "dns-error": "errors", "disk-fill": "error-logs",
    "io-delay": None,
}
METRICS: dict[str, str] = {
    "cpu-stress": "cpu usage of {s}", "memory-stress": "memory usage of {s}", "instance-kill": "restarts of {s}",
    "instance-failure": "server errors of callers of {s}", "network-delay": "request latency to {s}",
    "network-loss": "failed connections to {s}", "dns-error": "failed connections to {s}",
    "disk-fill": "filesystem usage of {s}", "io-delay": "request latency of {s}",
}


def action_named(name: str) -> Action:
    if name not in ACTIONS:
        raise InputError(f"--action {name!r} is not a direct action{suggest(name, list(ACTIONS))}; "
                         f"known: {', '.join(ACTIONS)}")
    return ACTIONS[name]


def coerce(param: Param, raw: str, action: str) -> Any:
    try:
        value = param.type(raw)
    except ValueError:
        raise InputError(f"{action} {param.name}={raw!r}: expected {param.type.__name__}") from None
    if (param.minimum is not None and value < param.minimum) or (param.maximum is not None and value > param.maximum):
        lo = param.type(param.minimum) if param.minimum is not None else "-inf"
        hi = param.type(param.maximum) if param.maximum is not None else "inf"
        raise InputError(f"{action} {param.name}={value} is outside {lo}..{hi}")
    return value


def parse_params(action: Action, pairs: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """`k=v` strings as typed values; every parameter the action takes is written, defaults included."""
    known = {p.name: p for p in action.params}
    given: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--param {pair!r}: write it as name=value")
        if key not in known:
            takes = ", ".join(known) or "no parameters"
            raise InputError(f"{action.name} takes no parameter {key!r}{suggest(key, list(known))}; it takes {takes}")
        given[key] = coerce(known[key], raw, action.name)
    return {p.name: given.get(p.name, p.default) for p in action.params}


def plan_direct(ws: Workspace, app_name: str, service: str, action_name: str,
                pairs: list[str] | tuple[str, ...] = (), level: str | None = None, entry_id: str | None = None,
                taken: set[str] | None = None, unique: bool = True,
                app: AppDescriptor | None = None) -> dict[str, Any]:
    app = app or load_app(ws, app_name)
    app.service(service)
    if app.target_refusal(service):
        raise InputError(f"--service {service}: {app.target_refusal(service)}")
    action = action_named(action_name)
    level = level or action.levels[0]
    if level not in action.levels:
        raise InputError(f"{action.name} acts at {', '.join(action.levels)} level, not {level}")
    params = parse_params(action, pairs)
    entry_id = check_id(entry_id) if entry_id else free_id(ws, app.name, f"{app.name}-{service}-{action.name}",
                                                            taken or set())
    shown = ", ".join(f"{k} {v}" for k, v in params.items())
    title = f"{service} {action.name} at {level} level" + (f" ({shown})" if shown else "")
    data = skeleton(app, entry_id, title, "direct", action.category, level, service)
    effect = EFFECTS.get(action.name)
    data.update({
        "artifact": {"kind": "node" if level == "node" else "service",
                     "ref": f"node of {service}" if level == "node" else service,
                     "aliases": service_aliases(app, service)},
        "probe": entry_probe(app),
        "artifact_check": {"kind": "action", "service": service},
        "effect": effect or EFFECT_TODO,
        "evidence": {"metrics": [METRICS[action.name].format(s=service)], "traces": [service]},
        "recovery": _recovery(action, service),
        "direct": {"action": action.name, "params": params},
    })
    if unique:
        _refuse_duplicate(ws, data)
    return data


def _recovery(action: Action, service: str) -> str:
    if action.name == "instance-kill":
        return f"The platform restarts the {service} instance; wait for readiness."
    return f"Stop the {action.name} on {service}; {service} returns to normal without a change to it."


def _refuse_duplicate(ws: Workspace, data: dict[str, Any]) -> None:
    key = entry_from_data(data).change_key
    for file, other in catalog_entries(ws, data["app"]):
        if other.change_key == key:
            raise InputError(f"{file} already makes this intervention; two entries may not make the same change")


def platforms_note(action_name: str) -> str:
    action = action_named(action_name)
    return f"{action.name} can be carried out by: {', '.join(action.platforms)}"
