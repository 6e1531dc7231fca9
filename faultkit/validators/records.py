"""The records a validation writes into its bundle's stages.json, as types.

The stage log (stagelog.py) writes them, the judge (judge.py) reads them back from the bundle.
They are TypedDicts rather than dataclasses because they are the JSON itself: a bundle's bytes
are its evidence, and a typed view must not change a byte of what shipped bundles hold.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, Required, TypedDict

StageStatus = Literal["ok", "failed", "skipped"]


class CheckRecord(TypedDict, total=False):
    """Whether a change (cycle "inject") or its undo (cycle "revert") held, with its figure."""

    ok: bool
    measured: Any
    threshold: Any
    detail: str
    build: str | None  # rollouts: the build every replica should run


class StageFigures(TypedDict, total=False):
    """What a stage measured, against what; build and baseline also name the build made or found."""

    measured: Any
    threshold: Any
    build: str | None


class StageRecord(StageFigures):
    """One static stage's result (lint, patch, build, marker, baseline)."""

    stage: Required[str]
    status: Required[StageStatus]
    detail: Required[str]
    at: Required[float]


class CycleRecord(TypedDict):
    """One injection: window names (files under windows/) and the checks of inject and revert."""

    index: int
    counted: bool
    before: str
    inject: NotRequired[CheckRecord]
    after: NotRequired[str]
    revert: NotRequired[CheckRecord]
    recovery: NotRequired[str]
    sites: NotRequired[list[str]]  # two-site apps: the other sites observed beside every window (site_rule.py)


class StagesFile(TypedDict):
    """stages.json: rewritten after every step, so an interrupted run's record says where it stopped."""

    stages: list[StageRecord]
    cycles: list[CycleRecord]
    aborted: str | None
    current: str | None
