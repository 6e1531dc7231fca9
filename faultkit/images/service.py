"""Build one service's image from the descriptor: base, context, image, in-image CI, leakage checks.

This is what a platform that runs images calls from the validator's build stage:

    build = build_service(workspace, app, "checkout", source_root=patched_src)
    build.id  # sha256:<hex>, the Build id the bundle records
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor, BaseImage
from faultkit.apps.sources import source_files
from faultkit.errors import InputError, PlatformError, Unsupported
from faultkit.images import base, ci, engine, instrument, jib, naming, upstream_from
from faultkit.images.build_api import build
from faultkit.images.context import context_tar, digest, source_tree
from faultkit.images.records import ImageBuild
from faultkit.workspace import Workspace


def mapped_repository(app: AppDescriptor) -> str:
    """The repository of bases built for an application's own FROM images (images.from), tagged by
    recipe, so one recipe is one image whichever upstream reference maps to it. Named by the app, as
    its other images are: the image's base.name label is readable by an agent, so it says nothing of
    faultkit (the leakage rules refuse that word)."""
    return f"{app.name}/base"


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
        folder = src / spec.source
        with_jib = jib.is_jib_project(folder)
        dockerfile = folder / "Dockerfile"
        if not with_jib and not dockerfile.is_file():
            raise InputError(f"{dockerfile}: no Dockerfile for {service}; add one (its base comes in as ARG BASE), "
                             "or a pom.xml building it with jib-maven-plugin")
        bases, rewritten, buildargs = jib_bases(app, folder / "pom.xml") if with_jib else build_bases(app, dockerfile)
        naming.refuse_leaks(workspace.root, [(f"file {rel}", rel) for rel, _ in files], fault_id)
        if tag is not None or labels:
            naming.refuse_leaks(workspace.root, _named(tag, labels or {}), fault_id)  # before a slow base build
        base_ids = [base.ensure_base(c, spec, ref)[0] for ref, spec in bases.items()]
        ctx = context_tar(files, rewritten)
        # the bases' ids are part of what the image is made of: a rebuilt base gets a new tag, not a moved one
        plain_revision = digest(ctx + b"\0" + ",".join(base_ids).encode())
        layer = instrument.planned(app, service)  # zero-code OpenTelemetry over the plain image, if any
        revision = instrument.revision(plain_revision, layer)
        tag = tag or naming.release_tag(app, service, revision)
        base_ref = next(reversed(bases), "")  # the base of the last FROM: the image's own (OCI's base.name)
        all_labels = {**naming.release_labels(app, service, revision, base_ref), **(labels or {})}
        naming.refuse_leaks(workspace.root, _named(tag, all_labels), fault_id)
        # the image the service's build makes; with a layer to add, under its own release tag
        plain_tag = naming.release_tag(app, service, plain_revision) if layer else tag
        plain_labels = naming.release_labels(app, service, plain_revision, base_ref) if layer else all_labels
        known = set(c.api.images(all=True, quiet=True))  # ids only: one call, not one inspect per image
        steps: tuple[str, ...] = ()  # a Docker build's intermediate images, removed with a refused image
        if with_jib:
            image_id, passed = _jib_build(c, service, folder, base_ref, plain_tag, plain_labels)
        else:
            result = build(c, ctx, tag=plain_tag, buildargs=buildargs, labels=plain_labels)
            if result.error or not result.image_id:
                engine.remove_images(c, result.steps, keep=base_ids)
                raise PlatformError(f"{service}: docker build failed: {result.error}; {_tail(result.log)}")
            image_id, steps = result.image_id, result.steps
        cached = image_id in known
        try:
            if not with_jib:  # a Jib image holds a JRE and no build tools: its tests ran in the Maven build
                package = ci.package_name(spec.source, files)
                passed = ci.run_ci(c, service, image_id, files, *app.checks(service), package)
            if layer:
                image_id, added = instrument.add(c, layer, service, plain_tag, tag, all_labels)
                steps, cached = (*steps, *added), image_id in known
            history = [h.get("CreatedBy", "") for h in c.api.history(image_id)]
            naming.refuse_leaks(workspace.root, [("history", h) for h in history], fault_id)
        except BaseException:
            if not cached:  # a refused or failing image is not kept for anyone to run
                engine.remove_images(c, [image_id, *steps], keep=base_ids)
            raise
    size = int(c.images.get(image_id).attrs.get("Size", 0))
    return ImageBuild(service=service, id=image_id, tag=tag, size=size, seconds=round(time.monotonic() - started, 2),
                      cached=cached, base=base_ref, revision=f"sha256:{revision}", ci=passed)


def build_bases(app: AppDescriptor, dockerfile: Path) -> tuple[dict[str, BaseImage], dict[str, bytes] | None,
                                                         dict[str, str]]:
    """(local reference -> base recipe, the last FROM's last; the context's rewritten Dockerfile or None;
    build args).

    A Dockerfile written for faultkit takes its base as `ARG BASE` (images.base); an application's own
    starts FROM upstream images, each built from what images.from maps it to, and the context carries
    the Dockerfile with those FROM lines pointing at them (upstream_from)."""
    try:  # as its bytes are: its line ends go to the build as they were
        text = dockerfile.read_bytes().decode("utf-8")
    except OSError as e:
        raise InputError(f"{dockerfile}: cannot read the Dockerfile ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{dockerfile}: not UTF-8 text (byte {e.start})") from None
    if not app.from_images or base.declared_base(text) is not None:
        ref = base.base_reference(app.base_image, base.default_base(dockerfile, text))
        return {ref: app.base_image}, None, {"BASE": ref}
    mapped = dict(app.from_images)
    images = upstream_from.from_images(dockerfile, text)
    upstream_from.unmapped(dockerfile, images, set(mapped))
    local = {f.image: base.base_reference(mapped[f.image], mapped_repository(app)) for f in images}
    last = {f.image: i for i, f in enumerate(images)}  # ordered so that the last FROM's base comes last
    bases = {local[image]: mapped[image] for image in sorted(last, key=last.__getitem__)}
    return bases, {"Dockerfile": upstream_from.rewrite(text, local).encode()}, {}


def jib_bases(app: AppDescriptor, pom: Path) -> tuple[dict[str, BaseImage], None, dict[str, str]]:
    """build_bases for a service Jib builds: the base images.from maps its pom's `<from><image>` to."""
    image = jib.from_image(pom)
    mapped = dict(app.from_images)
    if image not in mapped:
        raise InputError(f"{pom}: Jib builds FROM {image}, which is not mapped; add it to app.yaml's "
                         "images.from with the Debian packages that stand for it (openjdk-17-jre-headless)")
    return {base.base_reference(mapped[image], mapped_repository(app)): mapped[image]}, None, {}


def _jib_build(c: Any, service: str, folder: Path, base_ref: str, tag: str, labels: dict[str, str]) -> tuple[str, str]:
    """(image id, ci) of the Jib build of `folder` (jib.py), its unit tests failing as the image CI's do.
    An image already tagged so with these labels (the source's and the base's revision among them) is
    that build, made when its tests passed (a failing build makes no image): 'passed-before', as the
    in-image CI says of an image it checked already, and Maven is not run again."""
    import docker

    try:
        found = c.images.get(tag)
        if labels.items() <= ((found.attrs.get("Config") or {}).get("Labels") or {}).items():
            return str(found.id), "passed-before"
    except docker.errors.ImageNotFound:
        pass
    try:
        jib.build(folder, base_ref, tag, labels)
    except jib.TestsFailed as e:
        raise ci.CheckFailed(service, "unit tests", e.failing, e.output, where="in its Maven build") from None
    return str(c.images.get(tag).id), "passed"


def buildable(app: AppDescriptor) -> tuple[str, ...]:
    """The services that have source (and so a Dockerfile or a Jib pom) to build, in descriptor order."""
    return tuple(s.name for s in app.services if s.source is not None)


def _named(tag: str | None, labels: dict[str, str]) -> list[tuple[str, str]]:
    items = [("tag", tag)] if tag else []
    return items + [(f"label {k}", f"{k}={v}") for k, v in labels.items()]


def _tail(log: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return " | ".join(lines[-n:])[:300]
