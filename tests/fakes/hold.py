"""Run one validation through faultkit's own validate() on the fake platform, holding it inside a stage.

    python3 hold.py STATE_FILE FAULT EVIDENCE [STAGE]

As tests/validators/hold_at.py does on the local platform, but on the FakePlatform whose state is
in STATE_FILE, so the test can SIGKILL this process and recover from what it left there. The
workspace and state folder come from FAULTKIT_ROOT and FAULTKIT_STATE_DIR, as the CLI's.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from faultkit.observe.load import Limits
from faultkit.validators.params import ValidationParams
from faultkit.validators.pipeline import validate
from faultkit.workspace import Workspace
from tests.fakes.platform import FakePlatform

# the kill tests need the run to reach its stage, not a verdict: a loaded machine must not end it early
LAX = Limits(max_load_per_core=1e9, max_steal=1e9, max_lag_intervals=1e9, max_uncovered_intervals=1e9)
PARAMS = ValidationParams(window_s=1, interval_s=0.5, repeat=1, limits=LAX)


def main(state_file: str, fault: str, evidence: str, hold: str | None = None) -> None:
    ws = Workspace.find()

    def on_stage(stage: str) -> None:
        if stage == hold:
            threading.Event().wait()  # until the test kills this process

    platform = FakePlatform(ws, state_file=Path(state_file))
    try:
        validate(ws, platform, fault, PARAMS, Path(evidence), record=False, on_stage=on_stage)
    finally:
        platform.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
