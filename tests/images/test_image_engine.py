"""The engine helper script and the apt mirror look-up (no image is built here)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from faultkit.images import aptsource

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ci" / "dockerd.sh"


def test_start_leaves_a_running_engine_alone_and_stop_stops_nothing(docker_client: Any, tmp_path: Path) -> None:
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "FAULTKIT_DOCKERD_STATE": str(tmp_path / "engine")}
    started = subprocess.run(["bash", str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=60)
    assert started.returncode == 0 and "already answers" in started.stderr
    assert not (tmp_path / "engine.pid").exists()  # nothing recorded, so nothing for stop to stop
    stopped = subprocess.run(["bash", str(SCRIPT), "stop"], env=env, capture_output=True, text=True, timeout=60)
    assert stopped.returncode == 0 and stopped.stderr == ""
    assert docker_client.ping()


def test_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 2 and "usage" in done.stderr


def test_the_mirror_comes_from_apt_sources_in_both_formats(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("FAULTKIT_APT_MIRROR", raising=False)
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("# none here\ndeb-src http://src.example/debian bookworm main\n")
    (tmp_path / "sources.list.d" / "a.list").write_text(
        "deb [arch=amd64 signed-by=/k.gpg] http://one.example/debian bullseye main contrib\n")
    (tmp_path / "sources.list.d" / "b.sources").write_text(
        "Types: deb\nURIs: http://two.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\nComponents: main\n")
    assert aptsource.mirror("bullseye", tmp_path) == "http://one.example/debian"
    assert aptsource.mirror("bookworm", tmp_path) == "http://two.example/debian"
    monkeypatch.setenv("FAULTKIT_APT_MIRROR", "http://mine.example/debian")
    assert aptsource.mirror("bookworm", tmp_path) == "http://mine.example/debian"


def test_the_descriptor_images_block_is_checked_by_its_schema(tmp_path: Path) -> None:
    import pytest

    from faultkit.apps.descriptor import load_descriptor
    from faultkit.errors import InputError

    text = (Path(__file__).resolve().parents[2] / "apps" / "minishop" / "app.yaml").read_text()
    assert "    packages: [python3]\n" in text
    assert load_descriptor(Path(__file__).resolve().parents[2] / "apps" / "minishop" / "app.yaml").base_image.python
    bad = tmp_path / "app.yaml"
    bad.write_text(text.replace("    packages: [python3]\n", "    packages: []\n"))
    with pytest.raises(InputError, match="images"):
        load_descriptor(bad)
    bad.write_text(text.replace("python: [opentelemetry-api==1.45.1,", "python: ['opentelemetry-api; rm -rf /',"))
    with pytest.raises(InputError, match=r"app.yaml:\d+: images.base: .*is not valid"):
        load_descriptor(bad)
    start, end = text.index("  base:\n"), text.index("\nservices:")
    bad.write_text(text[:start] + "  base: registry.example/python:3.11" + text[end:])
    assert load_descriptor(bad).base_image.ref == "registry.example/python:3.11"


def test_build_without_an_engine_is_one_clear_line(tmp_path: Path) -> None:
    from tests.helpers.cli import cli_env, run_cli

    root = Path(__file__).resolve().parents[2]
    env = cli_env(DOCKER_HOST=f"unix://{tmp_path / 'no-engine.sock'}", FAULTKIT_ROOT=str(root))
    err = run_cli("build", "--app", "minishop", "--service", "email", cwd=root, env=env, check=1).stderr.strip()
    assert err.startswith("Error: docker: no Docker engine answers") and "dockerd.sh start" in err
    assert len(err.splitlines()) == 1
