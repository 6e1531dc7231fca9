"""Where faultkit writes (issue 32): an --out that is a device, a FIFO or a folder is refused before
anything is written (an atomic rename would replace the node with a file and report "written"), a
write that fails is an error with exit 1 and no file left behind, and no write goes through a
symlink out of the repository."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from faultkit.schedules import synthetic
from tests.helpers.cli import FAULTKIT, cli_env
from tests.hostile.refusal import assert_clean


def release(tmp_path: Path) -> Path:
    path = tmp_path / "catalog-1.0.0.json"
    path.write_text(json.dumps(synthetic.release("1.0.0", synthetic.entries("shop", 11, 20, ("code-bug",)))))
    return path


def commands(tmp_path: Path, out: Path) -> dict[str, tuple[str, ...]]:
    return {
        "catalog-export": ("catalog", "export", "--format", "incident-records", "--out", str(out)),
        "report": ("report", "--out", str(out)),
        "schedule-export": ("schedule", "export", "--app", "shop", "--seed", "1", "--release", str(release(tmp_path)),
                            "--out", str(out)),
    }


COMMANDS = ["catalog-export", "report", "schedule-export"]


def device(path: Path) -> Path:
    """A character device like /dev/full (1, 7), made where the test may break it."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_out_naming_a_device_is_refused_and_the_device_stays(run, tmp_path, command):
    out = device(tmp_path / "full")
    err = assert_clean(run(*commands(tmp_path, out)[command]), 1, str(out), "exists and is not a regular file")
    assert "written" not in err
    assert stat.S_ISCHR(os.lstat(out).st_mode), "the device node was replaced"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["full", "catalog-1.0.0.json", "repo"])


@pytest.mark.parametrize("command", COMMANDS)
def test_out_naming_a_fifo_is_refused_without_blocking(run, tmp_path, command):
    out = tmp_path / "pipe"
    os.mkfifo(out)
    assert_clean(run(*commands(tmp_path, out)[command], timeout=60), 1, str(out), "not a regular file")
    assert stat.S_ISFIFO(os.lstat(out).st_mode)


@pytest.mark.parametrize("command", COMMANDS)
def test_out_naming_a_folder_is_refused(run, tmp_path, command):
    out = tmp_path / "folder"
    out.mkdir()
    assert_clean(run(*commands(tmp_path, out)[command]), 1, str(out), "is a folder; name a file")
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_out_in_a_self_referencing_folder_is_one_line(run, tmp_path, command):
    loop = tmp_path / "loop"
    os.symlink("loop", loop)
    assert_clean(run(*commands(tmp_path, loop / "x.out")[command]), 1, "loop")
    assert os.readlink(loop) == "loop"


def _small_files() -> None:
    """In the child: files may not grow past 2,000 bytes, and a write past it fails instead of killing."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))


def test_a_write_that_fails_is_an_error_and_leaves_nothing(ws, tmp_path):
    out = tmp_path / "report.html"
    proc = subprocess.run([*FAULTKIT, "report", "--out", str(out)], cwd=ws.root, capture_output=True, text=True,
                          timeout=120, env=cli_env(PYTHONDONTWRITEBYTECODE="1"), preexec_fn=_small_files)
    assert_clean(proc, 1, str(out), "not written", "File too large")
    assert "written" not in proc.stdout
    assert list(tmp_path.iterdir()) == [ws.root], "a half-written or temporary file was left"


def test_drafts_through_a_symlink_out_of_the_repository_are_refused(ws, run, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ws.root / "drafts")
    assert_clean(run("author", "candidates", "--app", "minishop", "--drafts"), 1, "drafts folder", "leads outside")
    assert list(outside.iterdir()) == []


def test_drafts_in_the_repository_are_still_written(ws, run):
    proc = run("author", "candidates", "--app", "minishop", "--drafts")
    assert proc.returncode == 0, proc.stderr
    assert any((ws.root / "drafts" / "minishop").glob("*.yaml"))
