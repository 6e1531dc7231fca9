"""What a campaign Job's pods run, made and handed to the cluster before the Job starts.

The pods build nothing (they have no engine), so the faultkit image and the app's service images
are built here, on a machine with Docker, and put on the nodes by the loader (`cluster load`,
`kind load docker-image`); the service images' names go to the Job as its images.json.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from faultkit.apps.descriptor import load_app
from faultkit.images.service import buildable
from faultkit.images.toolkit import ToolkitImage, build_toolkit
from faultkit.platforms.imagebuilds import ImageBuilds
from faultkit.workspace import Workspace


@dataclass(frozen=True)
class JobImages:
    toolkit: ToolkitImage
    app_images: dict[str, str]  # service -> image reference, as the Job's images.json


def prepare(ws: Workspace, app: str, tag: str, loader: str | None, kubeconfig: str | None = None) -> JobImages:
    toolkit = build_toolkit(ws, tag)
    desc = load_app(ws, app)
    builds = ImageBuilds(ws, desc)
    made = {service: builds.build(service) for service in buildable(desc)}
    if loader:
        from faultkit.platforms.kubernetes.connection import Connection
        from faultkit.platforms.kubernetes.images import ClusterImages

        # only what the nodes lack is loaded (the node's own image list says)
        record = Path(ws.state_dir) / "campaign" / "images.json"
        ClusterImages(Connection(kubeconfig), shlex.split(loader), record).ensure_all(
            {toolkit.tag: toolkit.id, **{b.location: b.id for b in made.values()}})
    return JobImages(toolkit, {service: b.location for service, b in made.items()})
