"""`--platform` and each platform's options, declared once for every command that takes them.

`@platform_options()` adds `--platform NAME` and the kubernetes options, and hands the command one
`platform: PlatformChoice` (the name and its typed options) in their place. Environment variables
are only documented defaults of these options (click's envvar=), read nowhere else.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from faultkit.platforms import DEFAULT, PLATFORMS, PlatformOptions, open_platform, options_class
from faultkit.platforms.base import Platform
from faultkit.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])

KUBERNETES = (
    click.option("--namespace", default=None,
                 help="kubernetes: the namespace to create (default: the app's name)."),
    click.option("--adopt", default=None, metavar="NAMESPACE",
                 help="kubernetes: take over an app deployed there by other tooling; only what a fault names is "
                      "patched."),
    click.option("--kubeconfig", default=None,
                 help="kubernetes: kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."),
    click.option("--context", default=None, help="kubernetes: kubeconfig context (default: the current one)."),
    click.option("--load", "loader", default=None, envvar="FAULTKIT_KUBERNETES_LOAD", metavar="COMMAND",
                 help="kubernetes: command that puts built images into the cluster, run as `COMMAND IMAGE...` "
                      "(e.g. `kind load docker-image`); without it the cluster pulls the tags. "
                      "Default: $FAULTKIT_KUBERNETES_LOAD."),
    click.option("--prometheus", default=None, envvar="FAULTKIT_PROMETHEUS", metavar="URL",
                 help="kubernetes: read request counters by PromQL from this Prometheus instead of through the API "
                      "server's pod proxy: a URL, or k8s://NAMESPACE/SERVICE:PORT for one in the cluster (reached "
                      "through the API server). Its series carry the pod as `pod` (scraped) or `k8s_pod_name` "
                      "(pushed over OTLP). Default: $FAULTKIT_PROMETHEUS."),
    click.option("--otlp-endpoint", "otlp_endpoint", default=None, envvar="FAULTKIT_OTLP_ENDPOINT", metavar="URL",
                 help="kubernetes, up: every container's OpenTelemetry SDK exports there (OTLP/HTTP), each second, "
                      "with its pod and namespace as resource attributes. Default: $FAULTKIT_OTLP_ENDPOINT."),
    click.option("--existing", is_flag=True, envvar="FAULTKIT_KUBERNETES_EXISTING",
                 help="kubernetes: deploy into --namespace, which exists already (made for it, e.g. by a campaign "
                      "Job); `down` deletes the app, not the namespace. Default: $FAULTKIT_KUBERNETES_EXISTING."),
    click.option("--images", "images_file", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                 envvar="FAULTKIT_KUBERNETES_IMAGES",
                 help="kubernetes: JSON file mapping each service to a prebuilt image the nodes have; nothing is "
                      "built. Default: $FAULTKIT_KUBERNETES_IMAGES."),
)
NAMES = ("namespace", "adopt", "kubeconfig", "context", "loader", "prometheus", "otlp_endpoint", "existing",
         "images_file")


@dataclass(frozen=True)
class PlatformChoice:
    """The platform a command was told to use: its name (None: the one a record names) and options."""

    name: str | None
    options: PlatformOptions | None

    def open(self, workspace: Workspace, name: str | None = None) -> Platform:
        """The platform; `name` stands in when none was chosen (recover: the journal's)."""
        chosen = self.name or name or DEFAULT
        return open_platform(chosen, workspace, self.options if chosen == self.name else None)


def platform_options(default: str | None = DEFAULT, help: str = "Where the application runs.",
                     options: bool = True) -> Callable[[F], F]:
    """Decorator: `--platform` (default `default`; None: the recorded one) and, with `options`, the
    platforms' options, passed to the command as `platform: PlatformChoice`. Without `options` (a
    command whose children open the platform, and read the environment's defaults themselves) the
    choice carries the platform's default options."""
    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            name = kwargs.pop("platform_name")
            values = {n: kwargs.pop(n) for n in NAMES if n in kwargs}
            chosen = options_class(name).from_values(values) if name is not None else None
            return command(*args, platform=PlatformChoice(name, chosen), **kwargs)

        out: Any = wrapper
        for option in reversed(KUBERNETES if options else ()):
            out = option(out)
        return click.option("--platform", "platform_name", type=click.Choice(PLATFORMS), default=default,
                            show_default=default is not None, help=help)(out)
    return decorate
