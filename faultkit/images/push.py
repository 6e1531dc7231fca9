"""Hand an image to a user's cluster: tag it for their registry and push it there with the SDK."""

from __future__ import annotations

import re
from typing import Any

from faultkit.errors import InputError, PlatformError
from faultkit.images.records import ImageBuild, PushResult

# host[:port][/path], as `docker push` takes it: no scheme, no tag
_REGISTRY = re.compile(r"^[A-Za-z0-9.-]+(:\d{1,5})?(/[a-z0-9._-]+)*$")


def push(c: Any, build: ImageBuild, registry: str) -> PushResult:
    """Push `build` as REGISTRY/<repository>:<tag>; the registry's tag is removed locally afterwards,
    so the engine keeps only the release tag."""
    registry = registry.rstrip("/")
    if not _REGISTRY.match(registry):
        raise InputError(f"--push {registry!r}: not a registry address; give host[:port][/path], e.g. localhost:5000")
    repository, tag = build.tag.rsplit(":", 1)
    target = f"{registry}/{repository}"
    c.images.get(build.id).tag(target, tag)
    digest = ""
    try:
        for chunk in c.api.push(target, tag=tag, stream=True, decode=True):
            if "error" in chunk:
                raise PlatformError(f"push {target}:{tag}: {chunk['error'].strip()}; is the registry up and reachable?")
            digest = (chunk.get("aux") or {}).get("Digest", digest)
    finally:
        c.images.remove(f"{target}:{tag}", noprune=True)
    if not digest:
        raise PlatformError(f"push {target}:{tag}: the registry returned no digest")
    return PushResult(service=build.service, image=build.id, reference=f"{target}:{tag}", digest=digest)
