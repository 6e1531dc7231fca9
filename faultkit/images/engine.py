"""The connection to the Docker engine, and removal of what a build leaves behind."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from faultkit.errors import PlatformError


def client() -> Any:
    """A Docker SDK client for the engine named by DOCKER_HOST (default: the local socket)."""
    try:
        import docker
    except ImportError:
        raise PlatformError(
            "docker: the Docker SDK for Python is not installed; pip install 'faultkit[docker]'"
        ) from None
    try:
        c = docker.from_env(timeout=600)
        c.ping()
    except docker.errors.DockerException as e:
        raise PlatformError(
            f"docker: no Docker engine answers ({_short(e)}); start one with `scripts/ci/dockerd.sh start`"
        ) from None
    return c


def remove_images(c: Any, ids: Iterable[str], keep: Iterable[str] = ()) -> None:
    """Remove the given images (newest first) unless they are in `keep` or still needed by another
    image; used for the intermediate images of a failed or throw-away build."""
    import docker

    kept = set(keep)
    for image_id in reversed(list(dict.fromkeys(ids))):
        if image_id in kept or any(image_id.startswith(k.removeprefix("sha256:")[:12]) for k in kept):
            continue
        try:
            c.images.remove(image_id, noprune=False)
        except docker.errors.ImageNotFound:
            pass
        except docker.errors.APIError as e:
            # 409: another image or container still uses it; not ours to take. "unrecognized image
            # ID": another build on the same engine removed a layer of it meanwhile; it is gone either way
            if e.status_code != 409 and "unrecognized image" not in str(e):
                raise


def _short(e: Exception) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text if len(text) < 160 else text[:157] + "..."
