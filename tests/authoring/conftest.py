"""In-process runs of the real CLI entry point (faultkit.cli.main), for the many refusal cases."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from faultkit.cli import main


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def fk(ws, capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
