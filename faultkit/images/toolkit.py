"""The faultkit image: faultkit itself, its libraries and a catalog repository, for a campaign Job's pods.

Made like every other image here: a base built from Debian packages with debootstrap (Python and
git; nothing is pulled), then one classic build over a reproducible context. The libraries come from
pip, run here with `--target` into the context (the ordinary client, against the package index),
for the base's Python (bookworm: 3.11, this toolkit's version), so the image needs no network.

The repository goes in at WORKSPACE: the package folder plus the workspace's faultkit.toml, apps/,
catalog/, patches/ and keys/, so a pod validates the entries as they were when the image was made
(`campaign collect` refuses a bundle made on an entry that has changed since).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import BaseImage
from faultkit.errors import InputError, PlatformError
from faultkit.images import base, engine
from faultkit.images.build_api import build
from faultkit.images.context import context_tar
from faultkit.workspace import Workspace

WORKSPACE = "/opt/faultkit"
BASE = BaseImage(suite="bookworm", packages=("git", "python3"))
BASE_REPOSITORY = "faultkit/campaign-base"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# what the pods run needs; the build and test tools (ruff, pytest) run in the app's images, not here
NOT_IN_IMAGE = ("ruff", "pytest")
EXTRAS = ("kubernetes", "docker")
REPOSITORY_PARTS = ("faultkit.toml", "apps", "catalog", "patches", "keys")
SKIP = {"__pycache__", ".ruff_cache", ".pytest_cache", ".mypy_cache"}
DOCKERFILE = f"""ARG BASE
FROM ${{BASE}}
COPY site/ /usr/local/lib/python3.11/dist-packages/
COPY repo/ {WORKSPACE}/
WORKDIR {WORKSPACE}
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 FAULTKIT_ROOT={WORKSPACE}
CMD ["python3", "-m", "faultkit.cli", "--help"]
"""


@dataclass(frozen=True)
class ToolkitImage:
    id: str
    tag: str
    base: str
    seconds: float


def requirements(pyproject: Path = PACKAGE_ROOT / "pyproject.toml") -> list[str]:
    try:
        project = tomllib.loads(pyproject.read_text("utf-8"))["project"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"{pyproject}: cannot read the project's dependencies ({e}); build from a checkout") from None
    wanted = [r for r in project.get("dependencies", []) if not r.startswith(NOT_IN_IMAGE)]
    for extra in EXTRAS:
        wanted += project.get("optional-dependencies", {}).get(extra, [])
    return wanted


def _files(folder: Path, prefix: str) -> list[tuple[str, Path]]:
    return [(f"{prefix}/{p.relative_to(folder).as_posix()}", p) for p in sorted(folder.rglob("*"))
            if p.is_file() and not SKIP & set(p.relative_to(folder).parts)]


def _site(target: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
           "--only-binary=:all:", "--target", str(target), *requirements()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-2:])
        raise PlatformError(f"pip install --target for the faultkit image failed: {tail}")


def context(ws: Workspace, site: Path) -> bytes:
    files = _files(site, "site") + _files(PACKAGE_ROOT / "faultkit", "repo/faultkit")
    for part in REPOSITORY_PARTS:
        path = ws.root / part
        if path.is_file():
            files.append((f"repo/{part}", path))
        elif path.is_dir():
            files += _files(path, f"repo/{part}")
    return context_tar(files, {"Dockerfile": DOCKERFILE.encode()})


def build_toolkit(ws: Workspace, tag: str, client: Any = None) -> ToolkitImage:
    c = client or engine.client()
    started = time.monotonic()
    ref = f"{BASE_REPOSITORY}:{BASE.suite}-{base.recipe_digest(BASE)[:12]}"
    base_id, _ = base.ensure_base(c, BASE, ref)
    with tempfile.TemporaryDirectory(prefix="faultkit-site-") as tmp:
        _site(Path(tmp))
        ctx = context(ws, Path(tmp))
    result = build(c, ctx, tag=tag, buildargs={"BASE": ref},
                   labels={"org.opencontainers.image.title": "faultkit"})
    if result.error or not result.image_id:
        engine.remove_images(c, result.steps, keep=[base_id])
        raise PlatformError(f"faultkit image: docker build failed: {result.error}")
    return ToolkitImage(result.image_id, tag, ref, round(time.monotonic() - started, 1))
