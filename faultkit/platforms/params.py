"""Direct actions' parameters as the catalog's vocabulary states them, shared by every platform."""

from __future__ import annotations

from typing import Any

from faultkit.catalog.vocab import ACTIONS
from faultkit.errors import InputError


def int_param(params: dict[str, Any], action: str, name: str) -> int:
    """An integer parameter, its default and range as the catalog's vocabulary states them (once, there)."""
    spec = next(p for p in ACTIONS[action].params if p.name == name)
    low, high = int(spec.minimum or 0), int(spec.maximum or 2**31)
    value = params.get(name, spec.default)
    n = _as_int(value)
    if n is None:
        raise InputError(f"action parameter {name!r}: expected an integer, got {value!r}")
    if not low <= n <= high:
        raise InputError(f"action parameter {name!r}: {n} is outside {low}..{high}")
    return n


def _as_int(value: object) -> int | None:
    if isinstance(value, int | float | str):
        try:
            return int(value)
        except ValueError:
            return None
    return None
