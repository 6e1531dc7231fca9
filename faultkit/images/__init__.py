"""OCI images of an app's services, built with the Docker SDK on a local engine (`faultkit build`).

base (Debian base images, no registry) -> context (reproducible build context) -> service (one
image per service, the service's CI run in it) -> marker (text in an image's own layers) -> push.
"""

from faultkit.images.ci import CheckFailed
from faultkit.images.marker import check_marker, find_text
from faultkit.images.push import push
from faultkit.images.records import ImageBuild, MarkerCheck, PushResult
from faultkit.images.service import build_service, buildable

__all__ = ["CheckFailed", "ImageBuild", "MarkerCheck", "PushResult", "build_service", "buildable", "check_marker",
           "find_text", "push"]
