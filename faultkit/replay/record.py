"""The run record, runs/<schedule>/<run>/, written as the run goes and sealed at the end like an
evidence bundle (a MANIFEST.json of sha256 digests over every file, the agent's workspace too).

    run.json          the schedule, release, platform, parameters; when the run ended and why
    schedule.json     the schedule file as replayed
    changes.json      every revert and injection in order: boundary, start, in place / undone, check
    invocations.json  every invocation: boundary, all changes in place, start, end, the command's result
    probes.json       each active fault's symptom probe at every invocation
    traffic.json      the entry service's counters over the run
    figures.json      what figures.py computes from the files above
    invocations/N.log the command's output;  workspace/  the command's persistent folder
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faultkit.bundles import BundleWriter, dumps
from faultkit.replay.figures import FIGURES, compute


@dataclass
class RunRecord:
    folder: Path
    run: dict[str, Any]
    changes: list[dict[str, Any]] = field(default_factory=list)
    invocations: list[dict[str, Any]] = field(default_factory=list)
    probes: list[dict[str, Any]] = field(default_factory=list)
    traffic: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.bundle = BundleWriter(self.folder)
        self.workspace.mkdir(exist_ok=True)
        self.save()

    @property
    def workspace(self) -> Path:
        return self.folder / "workspace"

    def log(self, number: int) -> Path:
        return self.folder / "invocations" / f"{number}.log"

    def save(self) -> None:
        """Every file as it stands: an interrupted run keeps what it had."""
        self.bundle.write("run.json", self.run)
        self.bundle.write("changes.json", self.changes)
        self.bundle.write("invocations.json", self.invocations)
        self.bundle.write("probes.json", self.probes)
        self.bundle.write("traffic.json", self.traffic)

    def seal(self) -> dict[str, Any]:
        self.save()
        figures = compute(self.folder)
        self.bundle.write_text(FIGURES, dumps(figures))
        self.bundle.seal()
        return figures
