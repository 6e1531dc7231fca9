"""Handing images to the nodes (ClusterImages), against a node list that lags as the kubelet's does.

The kubelet lists a newly loaded image in the node's status only after its image cache refresh (30 s)
and its status period (10 s). What that wait teaches is the image's repository digests, which a loader
such as kind's gives and tools/cluster's does not; when the nodes already list an earlier image of
faultkit's by its tag alone, the new one is known by its build id and nobody waits. The loader here is
a real command; the API server's node list is the part played."""

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


def test_a_node_listing_earlier_images_by_tag_alone_is_not_waited_for(tmp_path: Path) -> None:
    images, path = _images(tmp_path, [["docker.io/minishop/cart:1.0.0-aaaa"]], False, EARLIER)
    started = time.monotonic()
    images.ensure("minishop/cart:1.0.0-bbbb", NEW_ID, timeout=30)
    assert time.monotonic() - started < 1.5  # the node lists it 2 s after the load
    assert images.digests("minishop/cart:1.0.0-bbbb") == {NEW_ID}
    assert (tmp_path / "loaded.log").read_text().startswith("minishop/cart:1.0.0-bbbb ")
    assert set(json.loads(path.read_text())) == {*EARLIER, NEW_ID}


def test_a_loader_that_gives_repository_digests_is_waited_for_and_they_are_recorded(tmp_path: Path) -> None:
    kind_like = [["docker.io/minishop/cart:1.0.0-aaaa", "docker.io/minishop/cart@sha256:" + "c" * 64]]
    images, _ = _images(tmp_path, kind_like, True, EARLIER)
    started = time.monotonic()
    images.ensure("minishop/cart:1.0.0-bbbb", NEW_ID, timeout=30)
    assert 2.0 <= time.monotonic() - started < 10
    assert images.digests("minishop/cart:1.0.0-bbbb") == {NEW_ID, "sha256:" + "d" * 64}
    assert images.build_of("sha256:" + "d" * 64) == NEW_ID


def test_the_first_load_with_nothing_earlier_waits_for_the_node_list(tmp_path: Path) -> None:
    images, _ = _images(tmp_path, [], False)
    started = time.monotonic()
    images.ensure("minishop/cart:1.0.0-bbbb", NEW_ID, timeout=30)
    assert 2.0 <= time.monotonic() - started < 10
    assert images.digests("minishop/cart:1.0.0-bbbb") == {NEW_ID}


def test_an_image_the_nodes_have_is_not_loaded_again(tmp_path: Path) -> None:
    images, _ = _images(tmp_path, [["docker.io/minishop/cart:1.0.0-bbbb"]], False)
    images.ensure("minishop/cart:1.0.0-bbbb", NEW_ID, timeout=30)
    assert not (tmp_path / "loaded.log").exists()
    assert images.location_of(NEW_ID) == "minishop/cart:1.0.0-bbbb"


def test_every_missing_image_goes_to_one_run_of_the_loader(tmp_path: Path) -> None:
    images, _ = _images(tmp_path, [["docker.io/minishop/cart:1.0.0-aaaa"]], False, EARLIER)
    wanted = {"minishop/cart:1.0.0-aaaa": "sha256:" + "a" * 64, "minishop/cart:1.0.0-bbbb": NEW_ID,
              "minishop/payment:1.0.0-cccc": "sha256:" + "c" * 64}
    images.ensure_all(wanted, timeout=30)
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
