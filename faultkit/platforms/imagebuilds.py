"""The build side of the platform protocol for platforms that run images (a cluster, Docker):
`build`, `build_contains` and `builds`, as faultkit/platforms/base.py names them, over this package.

A platform composes one of these and forwards its three methods to it; the validator's build and
marker stages then record image ids as Build ids without knowing about Docker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor
from faultkit.images import engine, naming
from faultkit.images.marker import find_text
from faultkit.images.service import build_service
from faultkit.platforms.base import Build
from faultkit.workspace import Workspace


class ImageBuilds:
    def __init__(self, workspace: Workspace, app: AppDescriptor, client: Any = None) -> None:
        self.workspace, self.app = workspace, app
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = engine.client()
        return self._client

    def build(self, service: str, source_root: str | None = None) -> Build:
        """Raises images.CheckFailed (with .what and .failing) when the service's CI fails in the image."""
        b = build_service(self.workspace, self.app, service, Path(source_root) if source_root else None,
                          client=self.client)
        return Build(id=b.id, service=service, location=b.tag)

    def build_contains(self, build_id: str, text: str) -> bool:
        return bool(find_text(self.client, build_id, text))

    def builds(self, service: str) -> list[Build]:
        """The service's images on the engine, oldest first; an image another of them is built over
        (the plain image under images.instrument's layer) is part of that build, not one of its own:
        the marker stage would take a patched build's own plain image for an earlier build."""
        images = self.client.images.list(filters=naming.service_filter(self.app, service))
        layers = {i.id: i.attrs["RootFS"]["Layers"] for i in images}
        under = {a for a, own in layers.items() for b, theirs in layers.items()
                 if own and len(theirs) > len(own) and theirs[:len(own)] == own}
        ordered = sorted((i for i in images if i.id not in under), key=lambda i: (i.attrs.get("Created", ""), i.id))
        return [Build(id=i.id, service=service, location=(i.tags or [i.id])[0]) for i in ordered]
