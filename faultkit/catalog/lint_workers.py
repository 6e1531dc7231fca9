"""Checking many catalog files on forked processes (a cold lint of a large catalog).

Forked, not spawned: a worker starts with the parent's imports, compiled schema and rule context
already in memory, so it costs a fork, not a second start-up. The files are cut into one
contiguous share per process, the parent's included; the results come back in the files' order,
so the report is the same bytes as a lint on one process.
"""

from __future__ import annotations

import copyreg
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from types import MappingProxyType
from typing import Any, TypeVar


def _frozen(d: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(d)


# an entry's frozen mappings travel back as the dicts they wrap (pickle refuses a mappingproxy)
copyreg.pickle(MappingProxyType, lambda m: (_frozen, (dict(m),)))

_In = TypeVar("_In")
_Out = TypeVar("_Out")

# what the forked workers run, set by the parent just before it forks them (a closure over the
# linter would have to be pickled; the fork copies it instead)
_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def _run_share(bounds: tuple[int, int]) -> list[Any]:
    assert _JOB is not None
    check, items = _JOB
    return [check(item) for item in items[bounds[0]:bounds[1]]]


def map_forked(check: Callable[[_In], _Out], items: Sequence[_In], workers: int) -> list[_Out]:
    """[check(i) for i in items] over `workers` processes: this one takes the first share while
    workers - 1 forked ones take the rest (a worker fewer to start, its results not sent back)."""
    global _JOB
    share = -(-len(items) // workers)
    bounds = [(start, min(start + share, len(items))) for start in range(0, len(items), share)]
    _JOB = (check, items)
    try:
        with ProcessPoolExecutor(max(1, len(bounds) - 1), mp_context=multiprocessing.get_context("fork")) as pool:
            rest = pool.map(_run_share, bounds[1:])  # forked now, before this process starts its share
            first = _run_share(bounds[0])
            return [*first, *(out for part in rest for out in part)]
    finally:
        _JOB = None
