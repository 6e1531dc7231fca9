"""Platforms: where an application runs. One protocol (base.Platform), opened by one factory.

`open_platform(name, workspace, options)` is the only place that knows which class a name means;
each platform's options are a typed record (options.py). Everything outside faultkit/platforms/
asks the protocol, or the options' class attributes, never a platform's name.
"""

from __future__ import annotations

from faultkit.errors import UsageError
from faultkit.extras import require
from faultkit.platforms.base import Platform
from faultkit.platforms.options import OPTIONS, KubernetesOptions, LocalOptions, PlatformOptions
from faultkit.workspace import Workspace

PLATFORMS = tuple(OPTIONS)
DEFAULT = LocalOptions.name

__all__ = ["DEFAULT", "PLATFORMS", "KubernetesOptions", "LocalOptions", "PlatformOptions",
           "open_platform", "options_class", "platform_flag"]


def options_class(name: str) -> type[LocalOptions] | type[KubernetesOptions]:
    if name not in OPTIONS:
        raise UsageError(f"unknown platform {name!r}; choose one of: {', '.join(PLATFORMS)}")
    return OPTIONS[name]


def open_platform(name: str, workspace: Workspace, options: PlatformOptions | None = None) -> Platform:
    """The platform called `name`, with its options (None: its defaults)."""
    options = options if options is not None else options_class(name)()
    if options.name != name:
        raise UsageError(f"options of the {options.name} platform given for the {name} platform")
    if isinstance(options, LocalOptions):
        from faultkit.platforms.local import LocalPlatform

        return LocalPlatform(workspace)
    require("kubernetes", "the kubernetes platform")
    from faultkit.platforms.kubernetes import KubernetesPlatform

    return KubernetesPlatform(workspace, options)


def platform_flag(name: str) -> str:
    """How a command line names this platform: nothing for the default."""
    return "" if name == DEFAULT else f" --platform {name}"
