"""The marker search over a service's earlier images when another build on the same engine removes
one of them meanwhile (seen in CI: two workers share one engine). The engine is stood in for by a
client that answers as docker's does for an image that is gone; the real engine's search is
tests/images/test_image_faults.py."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import docker
import pytest

from faultkit.apps.descriptor import load_app
from faultkit.images.marker import ImageGone, check_marker
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]


def _tar(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


class Image:
    def __init__(self, image_id: str, text: bytes, gone_on_save: bool = False) -> None:
        self.id, self.labels, self.attrs = image_id, {}, {"RootFS": {"Layers": [f"layer of {image_id}"]}}
        self.text, self.gone_on_save = text, gone_on_save

    def save(self, named: bool = False) -> Any:
        if self.gone_on_save:
            raise docker.errors.NotFound("No such image")
        layer = _tar({"app/main.py": self.text})
        yield _tar({"manifest.json": json.dumps([{"Layers": ["layer.tar"]}]).encode(), "layer.tar": layer})


class Images:
    def __init__(self, listed: list[Image], present: dict[str, Image]) -> None:
        self.listed, self.present = listed, present

    def list(self, filters: dict[str, Any]) -> list[Image]:
        return self.listed

    def get(self, image_id: str) -> Image:
        if image_id not in self.present:
            raise docker.errors.ImageNotFound(f"No such image: {image_id}")
        return self.present[image_id]


class Client:
    def __init__(self, listed: list[Image], present: list[Image]) -> None:
        self.images = Images(listed, {i.id: i for i in present})


@pytest.fixture
def minishop(tmp_path: Path):
    return load_app(Workspace(root=REPO, state_dir=tmp_path), "minishop")


def test_an_earlier_image_removed_during_the_search_is_left_out(minishop) -> None:
    new = Image("sha256:new", b"rate = convert(amount)  # conversion")
    kept = Image("sha256:kept", b"rate = amount")
    removed = Image("sha256:removed", b"conversion")  # listed, then gone before it is read
    exported = Image("sha256:exported", b"conversion", gone_on_save=True)  # gone while it is exported
    client = Client([new, kept, removed, exported], [new, kept, exported])
    check = check_marker(client, minishop, "checkout", "sha256:new", "conversion")
    assert check.found_in == ("/app/main.py",)
    assert check.earlier == ("sha256:kept",) and check.earlier_with_marker == {}
    assert check.ok


def test_the_image_a_new_one_is_built_over_is_not_an_earlier_one(minishop) -> None:
    """Under images.instrument the service's plain image is the first layers of the new one."""
    new = Image("sha256:new", b"rate = convert(amount)  # conversion")
    new.attrs["RootFS"]["Layers"] = ["layer of sha256:plain", "the instrumentation"]
    plain = Image("sha256:plain", b"rate = convert(amount)  # conversion")
    older = Image("sha256:older", b"rate = amount")
    client = Client([new, plain, older], [new, plain, older])
    check = check_marker(client, minishop, "checkout", "sha256:new", "conversion")
    assert check.earlier == ("sha256:older",) and check.earlier_with_marker == {} and check.ok


def test_the_new_image_gone_is_still_an_error(minishop) -> None:
    client = Client([], [])
    with pytest.raises(ImageGone, match="sha256:new: not on this engine; build it first"):
        check_marker(client, minishop, "checkout", "sha256:new", "conversion")
