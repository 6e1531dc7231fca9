"""Shared fixtures: a throwaway catalog workspace made from the real minishop descriptor."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from faultkit.workspace import Workspace
from tests.helpers.cli import CLI, run_cli

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="session")
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Images whose in-image lint and tests passed are remembered for this session only (every test
    has a state folder of its own, so without it each would rerun them), never in the user's cache:
    a test that asserts a check ran must see it run in a fresh session."""
    os.environ["FAULTKIT_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache-home"))


@pytest.fixture(autouse=True)
def _private_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the repository's own .faultkit state or a running platform of the user's."""
    monkeypatch.setenv("FAULTKIT_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    # the validator signs bundles with a per-user key made on first use: a temporary one here, never ~/.config
    monkeypatch.setenv("FAULTKIT_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    monkeypatch.delenv("FAULTKIT_KEY", raising=False)
    monkeypatch.delenv("FAULTKIT_ROOT", raising=False)
    # the telemetry stack's `env` exports them: a user's stack must not reach every test's validations
    monkeypatch.delenv("FAULTKIT_JAEGER", raising=False)
    monkeypatch.delenv("FAULTKIT_ALERTS", raising=False)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """A catalog repository in tmp_path holding a copy of minishop and an empty catalog."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "apps" / "minishop", root / "apps" / "minishop",
                    ignore=shutil.ignore_patterns("__pycache__", ".ruff_cache", ".pytest_cache"))
    for folder in ("catalog/minishop", "patches/minishop", "schedules"):
        (root / folder).mkdir(parents=True)
    monkeypatch.setenv("FAULTKIT_ROOT", str(root))
    return Workspace.find(environ=os.environ)


@pytest.fixture
def cli(ws: Workspace) -> CLI:
    """Run the real `faultkit` command in the workspace (tests.helpers.cli.run_cli with cwd set)."""

    def run(*args: str, check: int | None = None, env: dict[str, str] | None = None, input: str | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=ws.root, check=check, env=env, input=input, timeout=timeout)

    return run


# Fixtures that reach the one-node cluster, the Docker engine or the telemetry stack. The fast tier (-m "not live") runs
# while the cluster is still being built, so a test that used one of them unmarked would wait minutes
# for a cluster and then fail: collection refuses it at once instead, saying what to mark.
EXCLUSIVE_FIXTURES = frozenset({"kubeconfig", "kubeconfig_path", "api", "docker_client", "testapp_image"})
LIVE_FIXTURES = EXCLUSIVE_FIXTURES | {"telemetry_stack"}
# The live tier runs its other tests on three workers (each starts its own minishop or stack on free
# ports) and then these on two, grouped as below: the machine has one cluster and one engine.
NEEDS = (("live", LIVE_FIXTURES, "the cluster, the Docker engine or the telemetry stack"),
         ("exclusive", EXCLUSIVE_FIXTURES, "the machine's one cluster or Docker engine"))


# The exclusive phase runs on two workers (scripts/test.sh, --dist loadgroup): a module's tests go to one
# worker together, so its fixtures bring up one minishop; modules that bring up several namespaces at
# once share one group instead (tests/helpers/marks.py), so at most one of them runs at a time.
@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("exclusive") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    for mark, fixtures, what in NEEDS:
        unmarked = [item.nodeid for item in items if fixtures.intersection(getattr(item, "fixturenames", ()))
                    and item.get_closest_marker(mark) is None]
        if unmarked:
            raise pytest.UsageError(f"{unmarked[0]} (and {len(unmarked) - 1} more) use {what}: "
                                    f"mark them {mark} (pytestmark = [pytest.mark.live, ...])")
    _leave_out_long(config, items)


def _leave_out_long(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`long` tests run only when -m names them, so `-m "not live"` and `-m live` leave them out too
    (an -m in addopts would be replaced by the one on the command line)."""
    if "long" in (config.option.markexpr or ""):
        return
    kept = [item for item in items if item.get_closest_marker("long") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("long")])
        items[:] = kept
