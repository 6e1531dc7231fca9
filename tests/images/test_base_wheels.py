"""Python wheels in a base image built from Debian packages: the recipe's digest and the pip call.

The real build (debootstrap, pip, the image's own python3 importing the OpenTelemetry SDK) is proved
by the image tests that build minishop's release (test_image_builds.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from faultkit.apps.descriptor import BaseImage
from faultkit.errors import InputError
from faultkit.images import base, wheels


def test_wheels_are_part_of_the_recipe_and_a_base_without_keeps_its_tag():
    plain = BaseImage(suite="bookworm", packages=("python3",))
    # the digest a base of Debian packages alone has always had: its tag must not move
    assert base.recipe_digest(plain) == base.recipe_digest(BaseImage(suite="bookworm", packages=("python3",),
                                                                      python=()))
    sdk = BaseImage(suite="bookworm", packages=("python3",), python=("opentelemetry-sdk==1.45.1",))
    newer = BaseImage(suite="bookworm", packages=("python3",), python=("opentelemetry-sdk==1.45.2",))
    assert len({base.recipe_digest(plain), base.recipe_digest(sdk), base.recipe_digest(newer)}) == 3
    assert base.recipe_digest(sdk) == base.recipe_digest(
        BaseImage(suite="bookworm", packages=("python3",), python=("opentelemetry-sdk==1.45.1",)))
    default = "minishop/python-base:bookworm"
    assert base.base_reference(sdk, default) != base.base_reference(plain, default)


def test_the_images_python_is_read_from_its_root(tmp_path: Path):
    (tmp_path / "usr" / "bin").mkdir(parents=True)
    with pytest.raises(InputError, match="add python3 to images.base.packages"):
        wheels.image_python(tmp_path)
    for name in ("python3", "python3.11", "python3.11-config", "python3-config"):
        (tmp_path / "usr" / "bin" / name).touch()
    assert wheels.image_python(tmp_path) == "3.11"


def test_pip_resolves_binary_wheels_for_the_images_python_and_machine(tmp_path: Path):
    cmd = wheels.pip_command(["opentelemetry-sdk==1.45.1"], tmp_path / "site", "3.11", machine="aarch64")
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    assert "--only-binary=:all:" in cmd and cmd[cmd.index("--python-version") + 1] == "3.11"
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--platform"] == ["manylinux2014_aarch64",
                                                                           "manylinux_2_28_aarch64"]
    assert cmd[-3:] == ["--target", str(tmp_path / "site"), "opentelemetry-sdk==1.45.1"]
