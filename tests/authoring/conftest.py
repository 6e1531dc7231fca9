"""`fk`: the real CLI in the workspace, its output split into code, stdout and stderr."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from faultkit.workspace import Workspace
from tests.helpers.cli import run_cli


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def fk(ws: Workspace) -> Callable[..., Run]:
    def run(*args: str) -> Run:
        proc = run_cli(*args, cwd=ws.root)
        return Run(proc.returncode, proc.stdout, proc.stderr)

    return run
