"""Handing images to the nodes (ClusterImages), against a node list that lags as the kubelet's does.

The kubelet lists a newly loaded image in the node's status only after its image cache refresh (30 s)
and its status period (10 s). Nothing waits for that: a repository digest (which a loader such as
kind's gives, and tools/cluster's does not) is learned from the first pod that reports the image's
reference with it. The loader here is a real command; the API server's node list is the part played."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from faultkit.errors import PlatformError
from faultkit.platforms.kubernetes.images import ClusterImages


class LaggingNodes:
    """`conn.core.list_node()` listing what the loader put on the node only `lag_s` after it did."""

    def __init__(self, loaded_log: Path, listed: list[list[str]], lag_s: float, digest_names: bool) -> None:
        self.loaded_log, self.listed, self.lag_s, self.digest_names = loaded_log, listed, lag_s, digest_names
        self.core = self

    def list_node(self, _preload_content: bool = True) -> Any:
        """The node list as the API server sends it (the platform reads its JSON)."""
        names = list(self.listed)
        if self.loaded_log.exists():
            for line in self.loaded_log.read_text().splitlines():
                *refs, at = line.split(" ")
                if time.time() - float(at) >= self.lag_s:
                    for ref in refs:
                        full = f"docker.io/{ref}"
                        digest = [full.rsplit(":", 1)[0] + "@sha256:" + "d" * 64] if self.digest_names else []
                        names.append([full, *digest])
        return SimpleNamespace(data=json.dumps({"items": [{"status": {"images": [{"names": n} for n in names]}}]}))


def _loader(tmp_path: Path) -> tuple[list[str], Path]:
    log = tmp_path / "loaded.log"
    script = tmp_path / "load.py"
    script.write_text(f"import sys, time\nopen({str(log)!r}, 'a')"
                      ".write(' '.join(sys.argv[1:]) + ' ' + str(time.time()) + '\\n')\n")
    return [sys.executable, str(script)], log


def _images(tmp_path: Path, earlier: list[list[str]], digest_names: bool, record: dict[str, Any] | None = None
            ) -> tuple[ClusterImages, Path]:
    loader, log = _loader(tmp_path)
    path = tmp_path / "images.json"
    if record is not None:
        path.write_text(json.dumps(record))
    return ClusterImages(LaggingNodes(log, earlier, 2.0, digest_names), loader, path), path  # type: ignore[arg-type]


EARLIER = {"sha256:" + "a" * 64: {"ref": "minishop/cart:1.0.0-aaaa", "digests": ["sha256:" + "a" * 64]}}
NEW_ID = "sha256:" + "b" * 64


@pytest.mark.parametrize("digest_names", [False, True], ids=["tag-only", "kind-like"])
def test_a_load_is_not_waited_for_whatever_the_nodes_list_later(tmp_path: Path, digest_names: bool) -> None:
    images, path = _images(tmp_path, [], digest_names)
    started = time.monotonic()
    images.ensure("minishop/cart:1.0.0-bbbb", NEW_ID)
    assert time.monotonic() - started < 1.5  # the node lists it 2 s after the load
    assert (tmp_path / "loaded.log").read_text().startswith("minishop/cart:1.0.0-bbbb ")
    assert images.digests("minishop/cart:1.0.0-bbbb") == {NEW_ID}
    assert set(json.loads(path.read_text())) == {NEW_ID}


def test_a_repository_digest_is_learned_from_the_first_pod_reporting_the_reference(tmp_path: Path) -> None:
    images, _ = _images(tmp_path, [], True, EARLIER)
    images.ensure("minishop/cart:1.0.0-bbbb", NEW_ID)
    repo_digest = "sha256:" + "d" * 64
    expected = images.expected("minishop/cart:1.0.0-bbbb")
    assert expected is not None and expected.digests == {NEW_ID}
    # the kubelet reports the reference, normalized, with the digest kind's loader gave
    assert images.build_of(repo_digest, "docker.io/minishop/cart:1.0.0-bbbb") == NEW_ID
    assert images.digests("minishop/cart:1.0.0-bbbb") == {NEW_ID, repo_digest}
    assert images.build_of(repo_digest) == NEW_ID  # known from now on, the reference not needed
    # a digest reported with another build's reference is that build's, never this one's
    other = "sha256:" + "e" * 64
    assert images.build_of(other, "docker.io/minishop/cart:1.0.0-aaaa") == "sha256:" + "a" * 64
    # a digest with a reference faultkit never loaded stays what it is
    assert images.build_of("sha256:" + "f" * 64, "docker.io/someone/else:1") == "sha256:" + "f" * 64
    assert images.expected("someone/else:1") is None


def test_an_image_the_nodes_have_is_not_loaded_again(tmp_path: Path) -> None:
    images, _ = _images(tmp_path, [["docker.io/minishop/cart:1.0.0-bbbb"]], False)
    images.ensure("minishop/cart:1.0.0-bbbb", NEW_ID)
    assert not (tmp_path / "loaded.log").exists()
    assert images.location_of(NEW_ID) == "minishop/cart:1.0.0-bbbb"


def test_every_missing_image_goes_to_one_run_of_the_loader(tmp_path: Path) -> None:
    images, _ = _images(tmp_path, [["docker.io/minishop/cart:1.0.0-aaaa"]], False, EARLIER)
    wanted = {"minishop/cart:1.0.0-aaaa": "sha256:" + "a" * 64, "minishop/cart:1.0.0-bbbb": NEW_ID,
              "minishop/payment:1.0.0-cccc": "sha256:" + "c" * 64}
    images.ensure_all(wanted)
    runs = (tmp_path / "loaded.log").read_text().splitlines()
    assert [r.split(" ")[:-1] for r in runs] == [["minishop/cart:1.0.0-bbbb", "minishop/payment:1.0.0-cccc"]]
    assert images.location_of("sha256:" + "c" * 64) == "minishop/payment:1.0.0-cccc"


def test_a_failing_loader_is_one_error_naming_its_images(tmp_path: Path) -> None:
    script = tmp_path / "refuse.py"
    script.write_text("import sys\nsys.exit('no such image: ' + sys.argv[-1])\n")
    images = ClusterImages(LaggingNodes(tmp_path / "none.log", [], 0.0, False),  # type: ignore[arg-type]
                           [sys.executable, str(script)], tmp_path / "images.json")
    with pytest.raises(PlatformError, match=r"loading minishop/a:1, minishop/b:1 into the cluster with .* failed: "
                                            r"no such image: minishop/b:1$"):
        images.ensure_all({"minishop/a:1": "sha256:" + "1" * 64, "minishop/b:1": "sha256:" + "2" * 64})
    assert not (tmp_path / "images.json").exists()
