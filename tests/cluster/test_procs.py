"""The cluster's components are tracked by pid and start time; a wall-clock step must not lose them."""

from __future__ import annotations

from pathlib import Path

import psutil
import psutil._pslinux
import pytest

from tests.cluster.conftest import CLUSTER


def test_a_component_is_still_recognised_after_the_wall_clock_steps(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI run lost its containerd mid-run this way: `cluster load` said it was not running."""
    monkeypatch.syspath_prepend(str(CLUSTER.parent))
    from clusterlib import procs
    from clusterlib.layout import Layout
    layout = Layout(cache=tmp_path / "cache", state=tmp_path / "state")
    layout.run.mkdir(parents=True)
    layout.logs.mkdir(parents=True)
    pid = procs.start(layout, "sleeper", ["sleep", "30"])
    try:
        assert procs.process(layout, "sleeper").pid == pid
        stepped = psutil._pslinux.boot_time() + 1.0
        monkeypatch.setattr(psutil._pslinux, "boot_time", lambda: stepped)
        assert procs.process(layout, "sleeper").pid == pid
    finally:
        procs.stop(layout, "sleeper", timeout=5)
    assert procs.process(layout, "sleeper") is None and not procs.recorded(layout, "sleeper")
