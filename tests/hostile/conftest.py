"""Hostile input: what a contributor whose faults are being judged could put in a pull request.

Every case must end in a clean refusal: exit 1 or 2, one `Error:` line on stderr, no traceback,
no crash log, no signal, nothing written outside the repository.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from faultkit.workspace import Workspace
from tests.helpers.cli import cli_env, run_cli

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run(ws: Workspace) -> Run:
    """The real `faultkit` in the workspace, bounded in time (a hang is a failure, not a stuck CI)."""

    def go(*args: str, timeout: float = 120, cwd: Path | None = None,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=cwd or ws.root, timeout=timeout, env=cli_env(**(env or {})))

    return go
