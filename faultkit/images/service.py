"""Build one service's image from the descriptor: base, context, image, in-image CI, leakage checks.

This is what a platform that runs images calls from the validator's build stage:

    build = build_service(workspace, app, "checkout", source_root=patched_src)
    build.id  # sha256:<hex>, the Build id the bundle records
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor
from faultkit.apps.sources import source_files
from faultkit.errors import InputError, PlatformError, Unsupported
from faultkit.images import base, ci, engine, naming
from faultkit.images.build_api import build
from faultkit.images.context import context_tar, digest, source_tree
from faultkit.images.records import ImageBuild
from faultkit.workspace import Workspace


def build_service(workspace: Workspace, app: AppDescriptor, service: str, source_root: Path | None = None, *,
                  patch: Path | None = None, fault_id: str | None = None, tag: str | None = None,
                  labels: dict[str, str] | None = None, client: Any = None) -> ImageBuild:
    """Build (or find in the engine's cache) `service`'s image from `source_root` (default: the app's
    source folder), with `patch` applied to a copy when given; run the service's lint and unit tests
    in it. `fault_id` is never written anywhere; it is checked to be absent from everything the image
    says. Raises ci.CheckFailed when the service's CI fails, InputError when a name would leak."""
    spec = app.service(service)
    if spec.source is None or app.source_dir is None:
        raise Unsupported(f"{service}: {app.name}'s app.yaml names no source for it; there is nothing to build")
    c = client or engine.client()
    started = time.monotonic()
    with source_tree(app, source_root or app.source_dir, patch) as src:
        files = source_files(src, spec.source, app.common)
        dockerfile = src / spec.source / "Dockerfile"
        if not dockerfile.is_file():
            raise InputError(f"{dockerfile}: no Dockerfile for {service}; add one (its base comes in as ARG BASE)")
        base_ref = base.base_reference(app.base_image, base.default_base(dockerfile))
        naming.refuse_leaks(workspace.root, [(f"file {rel}", rel) for rel, _ in files], fault_id)
        if tag is not None or labels:
            naming.refuse_leaks(workspace.root, _named(tag, labels or {}), fault_id)  # before a slow base build
        base_id, _ = base.ensure_base(c, app.base_image, base_ref)
        ctx = context_tar(files)
        # the base's id is part of what the image is made of: a rebuilt base gets a new tag, not a moved one
        revision = digest(ctx + b"\0" + base_id.encode())
        tag = tag or naming.release_tag(app, service, revision)
        all_labels = {**naming.release_labels(app, service, revision, base_ref), **(labels or {})}
        naming.refuse_leaks(workspace.root, _named(tag, all_labels), fault_id)
        known = set(c.api.images(all=True, quiet=True))  # ids only: one call, not one inspect per image
        result = build(c, ctx, tag=tag, buildargs={"BASE": base_ref}, labels=all_labels)
        if result.error or not result.image_id:
            engine.remove_images(c, result.steps, keep=[base_id])
            raise PlatformError(f"{service}: docker build failed: {result.error}; {_tail(result.log)}")
        image_id = result.image_id
        cached = image_id in known
        try:
            history = [h.get("CreatedBy", "") for h in c.api.history(image_id)]
            naming.refuse_leaks(workspace.root, [("history", h) for h in history], fault_id)
            passed = ci.run_ci(c, service, image_id, files, app.lint_command, app.test_command)
        except BaseException:
            if not cached:  # a refused or failing image is not kept for anyone to run
                engine.remove_images(c, [image_id, *result.steps], keep=[base_id])
            raise
    size = int(c.images.get(image_id).attrs.get("Size", 0))
    return ImageBuild(service=service, id=image_id, tag=tag, size=size, seconds=round(time.monotonic() - started, 2),
                      cached=cached, base=base_ref, revision=f"sha256:{revision}", ci=passed)


def buildable(app: AppDescriptor) -> tuple[str, ...]:
    """The services that have source (and so a Dockerfile) to build, in descriptor order."""
    return tuple(s.name for s in app.services if s.source is not None)


def _named(tag: str | None, labels: dict[str, str]) -> list[tuple[str, str]]:
    items = [("tag", tag)] if tag else []
    return items + [(f"label {k}", f"{k}={v}") for k, v in labels.items()]


def _tail(log: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return " | ".join(lines[-n:])[:300]
