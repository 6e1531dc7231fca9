"""The records `faultkit.images` returns: plain frozen data the validator and the CLI can store."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ImageBuild:
    """One service image. `id` (sha256:<hex>, Docker's image id) is the Build id the validator records."""

    service: str
    id: str
    tag: str
    size: int  # bytes, as the engine reports the image (base layers included)
    seconds: float
    cached: bool  # the engine already had this image id before the build
    base: str  # the base image reference the build started from
    revision: str  # sha256 of the build context: what the image was built from
    ci: str  # "passed" (lint and unit tests ran in the image now) or "passed-before" (same image, same tests)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class MarkerCheck:
    """Where a marker text is in a service's new image, and in which earlier images it also is."""

    marker: str
    service: str
    image: str
    found_in: tuple[str, ...]  # paths in the new image whose content holds the marker
    earlier: tuple[str, ...]  # ids of the service's other images that were searched
    earlier_with_marker: dict[str, tuple[str, ...]]  # image id -> paths, for earlier images holding it

    @property
    def ok(self) -> bool:
        return bool(self.found_in) and not self.earlier_with_marker

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d


@dataclass(frozen=True)
class PushResult:
    service: str
    image: str
    reference: str  # REGISTRY/repository:tag as pushed
    digest: str  # the registry's manifest digest, sha256:<hex>
