"""Is a marker text in a service's new image, and in none of its earlier images?

Read from the image's own layers (`image.save()`, the engine's export of the image): the layers the
service build added on top of its base image, applied in order (a later layer's copy of a file, or its
whiteout, replaces the earlier one). The base layers are not searched: they are the Debian system
every image of the app shares, where common words occur anyway, and a patch cannot change them.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
from typing import IO, Any

from faultkit.apps.descriptor import AppDescriptor
from faultkit.errors import PlatformError
from faultkit.images import naming
from faultkit.images.records import MarkerCheck

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"


class ImageGone(PlatformError):
    """The image is not on the engine (any more)."""


def check_marker(c: Any, app: AppDescriptor, service: str, image_id: str, marker: str) -> MarkerCheck:
    """The marker's places in `image_id` and in every other image of the service this engine has.
    An earlier image removed while it is searched (another build on the same engine throwing its
    image away) is no longer one the service could run, and is left out of `earlier`."""
    found = find_text(c, image_id, marker)
    layers = c.images.get(image_id).attrs["RootFS"]["Layers"]
    # an image the new one is built over (the plain image under images.instrument's layer) is part of
    # it, not an earlier image of the service
    listed = sorted(i.id for i in c.images.list(filters=naming.service_filter(app, service))
                    if i.id != image_id and not _under(c, i.id, layers))
    searched, with_marker = [], {}
    for other in listed:
        try:
            paths = find_text(c, other, marker)
        except ImageGone:
            continue
        searched.append(other)
        if paths:
            with_marker[other] = paths
    return MarkerCheck(marker=marker, service=service, image=image_id, found_in=found,
                       earlier=tuple(searched), earlier_with_marker=with_marker)


def _under(c: Any, other: str, layers: list[str]) -> bool:
    """Is `other` an image these layers were built over (its layers are their first ones)?"""
    import docker

    try:
        own = c.images.get(other).attrs["RootFS"]["Layers"]
    except docker.errors.ImageNotFound:
        return False  # gone meanwhile: find_text leaves it out
    return bool(own) and own == layers[:len(own)]


def find_text(c: Any, image_id: str, text: str) -> tuple[str, ...]:
    """Absolute paths of the files, in the image's own (non-base) layers, whose content holds `text`."""
    import docker

    gone = ImageGone(f"image {image_id}: not on this engine; build it first")
    try:
        image = c.images.get(image_id)
    except docker.errors.ImageNotFound:
        raise gone from None
    skip = _base_layers(c, image)
    needle = text.encode()
    with tempfile.TemporaryFile() as spool:
        try:
            for chunk in image.save(named=False):
                spool.write(chunk)
        except docker.errors.NotFound:  # removed while it was being exported
            raise gone from None
        spool.seek(0)
        with tarfile.open(fileobj=spool, mode="r:") as archive:
            manifest = json.load(_member(archive, "manifest.json"))
            layers = manifest[0]["Layers"]
            hits: dict[str, bool] = {}
            for name in layers[skip:]:
                with tarfile.open(fileobj=_member(archive, name), mode="r:") as layer:
                    _apply(layer, hits, needle)
    return tuple(sorted(p for p, hit in hits.items() if hit))


def _base_layers(c: Any, image: Any) -> int:
    """How many of the image's layers are its base image's (0 when the base is not on this engine)."""
    import docker

    ref = (image.labels or {}).get(naming.BASE)
    if not ref:
        return 0
    try:
        base = c.images.get(ref)
    except docker.errors.ImageNotFound:
        return 0
    mine, theirs = image.attrs["RootFS"]["Layers"], base.attrs["RootFS"]["Layers"]
    return len(theirs) if mine[: len(theirs)] == theirs else 0


def _member(archive: tarfile.TarFile, name: str) -> IO[bytes]:
    f = archive.extractfile(name)
    if f is None:
        raise PlatformError(f"image export: {name} is missing or not a file")
    return f


def _apply(layer: tarfile.TarFile, hits: dict[str, bool], needle: bytes) -> None:
    for m in layer:
        path = "/" + m.name.lstrip("./")
        folder, _, base = path.rpartition("/")
        if base == OPAQUE:
            for p in [p for p in hits if p.startswith(folder + "/")]:
                del hits[p]
        elif base.startswith(WHITEOUT):
            gone = f"{folder}/{base[len(WHITEOUT):]}"
            for p in [p for p in hits if p == gone or p.startswith(gone + "/")]:
                del hits[p]
        elif m.isfile():
            f = layer.extractfile(m)
            hits[path] = f is not None and _contains(f, needle)


def _contains(f: IO[bytes], needle: bytes, block: int = 1 << 20) -> bool:
    tail = b""
    while True:
        data = f.read(block)
        if not data:
            return False
        if needle in tail + data:
            return True
        tail = data[-len(needle) + 1:] if len(needle) > 1 else b""


