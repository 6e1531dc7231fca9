"""The one way tests run the `faultkit` command: its real entry point, `faultkit.cli.main`.

`run_cli` calls `main(argv)` in this process, with the working directory, the environment and the
standard streams it would have as a process, and returns what a process would (exit code, stdout,
stderr). Starting `python3 -m faultkit.cli` costs about 0.6 s an invocation, and the suite makes
hundreds of them. The few tests that need a real process (signals, two runs at once, a crash's
log) use FAULTKIT with Popen; FAULTKIT_TEST_CLI=process runs every invocation as a process again.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

REPO = Path(__file__).resolve().parent.parent.parent
# the command line of the real CLI, for the tests that need a Popen (signals, two runs at once)
FAULTKIT = (sys.executable, "-m", "faultkit.cli")


class CLI(Protocol):
    """The `cli` fixture: runs faultkit in the test's workspace."""

    def __call__(self, *args: str, check: int | None = None, env: dict[str, str] | None = None,
                 input: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]: ...


def cli_env(**overrides: str) -> dict[str, str]:
    """This process's environment with faultkit importable from the checkout, plus overrides."""
    env = {**os.environ, **overrides}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def run_cli(*args: str, cwd: Path, check: int | None = None, env: dict[str, str] | None = None,
            input: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `faultkit ARGS` in cwd; with check, assert the exit code and show the output when it differs."""
    if os.environ.get("FAULTKIT_TEST_CLI") == "process":
        proc = subprocess.run([*FAULTKIT, *args], cwd=cwd, env=env or cli_env(),
                              capture_output=True, text=True, input=input, timeout=timeout)
    else:
        proc = _in_process(list(args), cwd, env or cli_env(), input)
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}, expected {check}\n{proc.stdout}{proc.stderr}"
    return proc


def _in_process(argv: list[str], cwd: Path, env: Mapping[str, str],
                input: str | None) -> subprocess.CompletedProcess[str]:
    from faultkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _as_process(cwd, env, input, out, err):
        code = main(argv)
    return subprocess.CompletedProcess([*FAULTKIT, *argv], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _as_process(cwd: Path, env: Mapping[str, str], input: str | None,
                out: io.StringIO, err: io.StringIO) -> Iterator[None]:
    """The working directory, environment and standard streams of a fresh process, restored after."""
    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.stdin = io.StringIO(input or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    finally:
        sys.stdin = saved_stdin
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
