"""Platforms: where an application runs. One protocol (base.Platform), several implementations."""

from __future__ import annotations

import os

from faultkit.errors import UsageError
from faultkit.extras import require
from faultkit.platforms.base import Platform
from faultkit.workspace import Workspace

PLATFORMS = ("local", "kubernetes")


def get_platform(name: str, workspace: Workspace) -> Platform:
    if name == "local":
        from faultkit.platforms.local import local_platform

        return local_platform(workspace)
    if name == "kubernetes":
        require("kubernetes", "the kubernetes platform")
        from faultkit.platforms.kubernetes import KubernetesPlatform

        return KubernetesPlatform(workspace, loader=os.environ.get("FAULTKIT_KUBERNETES_LOAD") or None)
    if name == "docker":
        raise UsageError(f"the {name} platform is not part of this release yet; use --platform local")
    raise UsageError(f"unknown platform {name!r}; choose one of: {', '.join(PLATFORMS)}")
