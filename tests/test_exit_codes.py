"""The documented exit codes (README, command reference), through the real `faultkit` process.

0 ok, 1 rejected or invalid, 2 usage error, 130 interrupted. Commands return their code; the one
handler in faultkit/cli.py maps errors; nothing in faultkit/commands raises SystemExit.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from faultkit.workspace import Workspace
from tests.factories import entry_data, write_entry
from tests.helpers.cli import CLI, FAULTKIT, cli_env, run_cli
from tests.helpers.shipped import bundle_of
from tests.platforms.fixture_app import write_app

REPO = Path(__file__).resolve().parent.parent


def test_ok_is_0(cli: CLI, ws: Workspace) -> None:
    write_entry(ws, entry_data())
    assert "1 files, 0 errors" in cli("catalog", "lint", "--no-cache", check=0).stdout
    cli("apps", "scope", "minishop", "cartstore", check=0)
    assert cli("--help", check=0).stdout.startswith("Usage: faultkit")


def test_lint_errors_and_invalid_input_are_1(cli: CLI, ws: Workspace) -> None:
    write_entry(ws, entry_data(effect="explodes"))
    proc = cli("catalog", "lint", "--no-cache", check=1)
    assert "1 errors" in proc.stdout
    proc = cli("apps", "show", "nosuchapp", check=1)
    assert proc.stderr.startswith("Error: ") and len(proc.stderr.strip().splitlines()) == 1


def test_a_verdict_that_differs_from_its_recomputation_is_1(tmp_path: Path) -> None:
    """Judged in this repository, whose faultkit.toml trusts the key the shipped bundles are signed with."""
    env = {k: v for k, v in cli_env().items() if k != "FAULTKIT_ROOT"}
    bundle = bundle_of("minishop-checkout-env-payment-addr-port")  # an admitting bundle: its verdict says admitted
    proc = run_cli("judge", str(bundle), "--json", cwd=REPO, env=env, check=0)
    assert json.loads(proc.stdout)["matches_recorded"] is True
    copy = tmp_path / bundle.parent.name / bundle.name  # the shipped bundle is never touched
    shutil.copytree(bundle, copy)
    verdict = copy / "verdict.json"
    verdict.write_text(verdict.read_text().replace('"admitted"', '"rejected"', 1))
    proc = run_cli("judge", str(copy), cwd=REPO, env=env, check=1)
    assert proc.stderr.startswith("Error: ") and "Traceback" not in proc.stderr


def test_usage_errors_are_2(cli: CLI) -> None:
    proc = cli("catalog", "lint", "--bogus", check=2)
    assert "No such option '--bogus'" in proc.stderr
    cli("nosuchcommand", check=2)
    proc = cli("author", "code", check=2)  # faultkit's own UsageError
    assert proc.stderr.startswith("Error: give --app")


def test_interrupted_is_130(tmp_path: Path) -> None:
    """Ctrl-C while `faultkit up` waits for a service that never gets ready."""
    root = tmp_path / "repo"
    app = write_app(root)
    back = app / "manifests" / "back.yaml"
    back.write_text(back.read_text().replace("/readyz", "/never-ready"))
    env = cli_env(FAULTKIT_ROOT=str(root), FAULTKIT_STATE_DIR=str(tmp_path / "state"))
    # Ctrl-C as a terminal delivers it: SIGINT at its default even when this run was started in the
    # background by a shell, which leaves it ignored (inherited across exec, so `up` never saw it)
    proc = subprocess.Popen([*FAULTKIT, "up", "--app", "fix", "--timeout", "120"],
                            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 60
        while time.time() < deadline:  # the supervisor runs and `up` waits on readiness
            status = run_cli("status", "--json", cwd=root, env=env, check=0)
            if json.loads(status.stdout)["up"]:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.3)
        else:
            raise AssertionError("the supervisor never came up")
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, out + err
        assert "Interrupted." in err and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        run_cli("down", cwd=root, env=env)


def test_no_command_raises_system_exit() -> None:
    """The exit code is the command's return value: nothing in faultkit raises SystemExit on the way."""
    offenders = []
    for path in sorted((REPO / "faultkit").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            text = ast.unparse(node) if isinstance(node, (ast.Raise, ast.Call)) else ""
            if isinstance(node, ast.Raise) and "SystemExit" in text:
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: {text}")
            elif isinstance(node, ast.Call) and text.startswith(("sys.exit(", "ctx.exit(")) \
                    and not _is_main_guard_entry(path, node):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: {text}")
    assert not offenders, "\n".join(offenders)


def _is_main_guard_entry(path: Path, node: ast.Call) -> bool:
    """A process's own entry point (`sys.exit(main())` in cli.run or a daemon's __main__) is where a code leaves."""
    return ast.unparse(node) == "sys.exit(main())"
