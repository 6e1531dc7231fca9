"""Run one validation through faultkit's own validate(), holding it inside a stage.

    python3 hold_at.py FAULT EVIDENCE [STAGE]

With STAGE, the `on_stage` hook blocks as that stage starts (its start is already in stages.json),
so the test can SIGKILL the run inside it; without, the run goes on and the test kills it where it
likes. The workspace and state folder come from FAULTKIT_ROOT and FAULTKIT_STATE_DIR, as the CLI's.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from faultkit.observe.load import Limits
from faultkit.platforms import open_platform
from faultkit.validators.params import ValidationParams
from faultkit.validators.pipeline import validate
from faultkit.workspace import Workspace


def main(fault: str, evidence: str, hold: str | None = None) -> None:
    ws = Workspace.find()

    def on_stage(stage: str) -> None:
        if stage == hold:
            threading.Event().wait()  # until the test kills this process

    # the kill tests need the run to reach its stage, not a verdict: a loaded machine must not end it
    # early as overloaded
    params = ValidationParams(window_s=3, interval_s=1, repeat=1, limits=Limits(max_load_per_core=1e9))
    validate(ws, open_platform("local", ws), fault, params, Path(evidence), record=False, on_stage=on_stage)


if __name__ == "__main__":
    main(*sys.argv[1:])
