"""Pushing to a user's registry with the SDK. Without a registry on this machine the test stands one
up only if REGISTRY_BIN names a `distribution` registry binary; the refusals are always tested."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from faultkit.errors import InputError, PlatformError
from faultkit.images import push
from faultkit.images.records import ImageBuild

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_bad_registry_address_is_refused(release: dict[str, ImageBuild], docker_client: Any) -> None:
    with pytest.raises(InputError, match="not a registry address"):
        push(docker_client, release["email"], "https://example:5000")


def test_a_registry_that_does_not_answer_fails_clearly_and_leaves_no_tag(release: dict[str, ImageBuild],
                                                                         docker_client: Any) -> None:
    registry = f"127.0.0.1:{_free_port()}"
    with pytest.raises(PlatformError, match=f"push {registry}/minishop/email"):
        push(docker_client, release["email"], registry)
    assert not [t for t in docker_client.images.get(release["email"].id).tags if t.startswith(registry)]


def test_push_to_a_real_registry_on_loopback(release: dict[str, ImageBuild], docker_client: Any,
                                             tmp_path: Path) -> None:
    binary = os.environ.get("REGISTRY_BIN")
    if not binary:
        pytest.skip("no registry binary: set REGISTRY_BIN to a `distribution` registry build to run this")
    port = _free_port()
    config = tmp_path / "config.yml"
    config.write_text(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {tmp_path / 'data'}\n"
                      f"http:\n  addr: 127.0.0.1:{port}\n")
    proc = subprocess.Popen([binary, "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            try:
                requests.get(f"http://127.0.0.1:{port}/v2/", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.2)
        b = release["email"]
        out = push(docker_client, b, f"127.0.0.1:{port}")
        repository, tag = b.tag.rsplit(":", 1)
        assert out.reference == f"127.0.0.1:{port}/{b.tag}"
        listed = requests.get(f"http://127.0.0.1:{port}/v2/{repository}/tags/list", timeout=5).json()
        assert listed["tags"] == [tag]
        head = requests.head(f"http://127.0.0.1:{port}/v2/{repository}/manifests/{tag}", timeout=5, headers={
            "Accept": "application/vnd.docker.distribution.manifest.v2+json"})
        assert head.headers["Docker-Content-Digest"] == out.digest
        assert not [t for t in docker_client.images.get(b.id).tags if t.startswith("127.0.0.1")]
    finally:
        proc.terminate()
        proc.wait(10)
