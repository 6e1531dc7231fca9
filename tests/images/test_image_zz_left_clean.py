"""Runs after the other image tests (file order): what they leave on the engine is the cached base
and service images and nothing else: no container, no stray image, no build cache."""

from __future__ import annotations

from typing import Any

import pytest

from faultkit.images.records import ImageBuild

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]


def _ancestors(c: Any, image_id: str) -> list[str]:
    chain = []
    while image_id:
        chain.append(image_id)
        image_id = c.api.inspect_image(image_id).get("Parent") or ""
    return chain


def test_nothing_is_left_behind_but_the_cached_images(before: Any, release: dict[str, ImageBuild],
                                                      docker_client: Any, take_snapshot: Any) -> None:
    c = docker_client
    base_id = c.images.get(next(iter(release.values())).base).id
    kept = {base_id} | {a for b in release.values() for a in _ancestors(c, b.id)}
    after = take_snapshot(c)
    # only what descends from our base image can be ours: other users of the engine are not counted
    new = [i for i in after.images - before.images if base_id in _ancestors(c, i)]
    assert sorted(set(new) - kept) == []
    assert c.containers.list(all=True, filters={"ancestor": base_id}) == []
    assert after.dangling - before.dangling == frozenset()
    assert after.build_cache == before.build_cache
