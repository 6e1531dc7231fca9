"""The schedule file (faultkit/schedule/v1): building it, its one byte spelling, reading it back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from faultkit import jsonio
from faultkit.errors import InputError
from faultkit.schedules.generator import Injectable, generate
from faultkit.schedules.params import ScheduleParams
from faultkit.schedules.sources import Source
from faultkit.schema import breadcrumb, validator
from faultkit.yamlio import atomic_write

SCHEMA = "faultkit/schedule/v1"
# Bumped whenever a change to the generator would draw different events from the same seed.
ALGORITHM = {"name": "linear-ramp-inverse-cdf", "prng": "splitmix64", "version": 1}


def build(source: Source, app: str, params: ScheduleParams, seed: int) -> dict[str, Any]:
    """Draw the schedule for one app of a catalog and wrap it as a schedule document."""
    candidates: list[Injectable] = source.candidates(app)
    result = generate(candidates, params, seed)
    return {
        "schema": SCHEMA,
        "release": {"version": source.version, "digest": source.digest},
        "app": app,
        "seed": seed,
        "algorithm": dict(ALGORITHM),
        "params": params.to_data(),
        "events": [e.to_data() for e in result.events],
        "stats": {**result.stats, "candidates": len(candidates)},
    }


def dumps(doc: dict[str, Any]) -> str:
    """The canonical text: sorted keys, two-space indent, fixed separators, ASCII, final newline.

    Floats are written by repr, which is the shortest round-tripping form on every platform.
    """
    return json.dumps(doc, sort_keys=True, indent=2, separators=(",", ": "), ensure_ascii=True) + "\n"


def problems(doc: Any) -> list[str]:
    """Every schema problem of a document, each as 'path: message'."""
    errors = sorted(validator("schedule").iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{breadcrumb(tuple(e.absolute_path))}: {e.message}" for e in errors]


def write(doc: dict[str, Any], path: Path) -> None:
    """Write the canonical text atomically. The tests check every document they write against
    the schema; doing it here too would double the export time for no user-facing gain."""
    atomic_write(path, dumps(doc))


def load(path: Path) -> dict[str, Any]:
    """Read a schedule file and check it against the schema; InputError names the first problem."""
    try:
        doc = jsonio.load(path)
    except InputError as e:
        raise InputError(f"{e}; pass a file written by `faultkit schedule export`") from None
    found = problems(doc)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise InputError(f"{path}: not a valid schedule: {found[0]}{more}; "
                         "export it again with `faultkit schedule export`")
    return doc
