"""The `local` platform: an app's Kubernetes manifests run as local processes (a small kubelet)."""

from __future__ import annotations

from faultkit.platforms.local.platform import LocalPlatform
from faultkit.workspace import Workspace

__all__ = ["LocalPlatform", "local_platform"]


def local_platform(workspace: Workspace) -> LocalPlatform:
    return LocalPlatform(workspace)
