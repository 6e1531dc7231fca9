"""The stage log: what a validation has done so far, kept in the bundle's stages.json.

The file is rewritten at every step (a stage begun, a stage ended, a cycle's check), so a run
killed anywhere leaves a record of where it stopped. `begin` also tells the live view and the
caller's `on_stage` hook which stage is starting.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Unpack

from faultkit.bundles import BundleWriter
from faultkit.validators.records import CycleRecord, StageFigures, StageRecord, StagesFile, StageStatus

Progress = Callable[[str, str], None]  # (stage, detail) for the live view
OnStage = Callable[[str], None]  # called as each stage starts, once its start is on disk


def no_progress(stage: str, detail: str) -> None:
    """The default live view: none."""


def no_hook(stage: str) -> None:
    """The default stage hook: none."""


@dataclass
class StageLog:
    bundle: BundleWriter
    progress: Progress = no_progress
    on_stage: OnStage = no_hook
    stages: list[StageRecord] = field(default_factory=list)
    cycles: list[CycleRecord] = field(default_factory=list)
    aborted: str | None = None
    current: str | None = None

    def record(self) -> StagesFile:
        return {"stages": self.stages, "cycles": self.cycles, "aborted": self.aborted, "current": self.current}

    def save(self) -> None:
        self.bundle.write("stages.json", self.record())

    def begin(self, name: str, detail: str = "") -> None:
        """Note the stage now running, so an interrupted run's record says where it stopped."""
        self.current = name
        self.save()
        self.progress(name, detail)
        self.on_stage(name)

    def stage(self, name: str, status: StageStatus, detail: str = "", **figures: Unpack[StageFigures]) -> bool:
        """Record a finished stage; True unless it failed."""
        self.current = None
        record: StageRecord = {"stage": name, "status": status, "detail": detail, "at": round(time.time(), 3),
                               **figures}
        self.stages.append(record)
        self.save()
        return status != "failed"
