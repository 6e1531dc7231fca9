"""The `kubernetes` platform: an app's manifests on a real cluster, through the official Python client."""

from __future__ import annotations

from faultkit.platforms.kubernetes.platform import KubernetesPlatform

__all__ = ["KubernetesPlatform"]
