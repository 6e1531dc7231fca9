"""Each platform's options as one typed record: what `open_platform` takes and the commands parse.

`faultkit ... --platform NAME` and the options beside it (commands/platform_options.py) become one
of these; environment variables are only the documented defaults of those options.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from faultkit.jsonio import load_image_map


@dataclass(frozen=True)
class LocalOptions:
    """The local platform takes no options: a state folder (FAULTKIT_STATE_DIR) is an app instance."""

    name: ClassVar[str] = "local"
    namespaced: ClassVar[bool] = False  # a campaign's instance is a state folder of its own
    up_allowance_s: ClassVar[float] = 60.0  # what `up` may take beyond waiting for readiness

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> LocalOptions:
        """From the command line's values (commands/platform_options.py): the other platforms' are not ours."""
        return cls()


@dataclass(frozen=True)
class KubernetesOptions:
    """Where and how the kubernetes platform runs an app (see kubernetes/platform.py). Once up, the
    ownership record's cluster, context and loader are the target, whatever these say."""

    name: ClassVar[str] = "kubernetes"
    namespaced: ClassVar[bool] = True  # a campaign's instance is a namespace of its own
    up_allowance_s: ClassVar[float] = 900.0  # every service's build (with its in-image CI) and load come first

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None  # up: the namespace to create (default: the app's name)
    adopt: str | None = None  # up: take over an app deployed in this namespace by other tooling
    loader: str | None = None  # command that puts built images on the nodes, run as `COMMAND IMAGE...`
    prometheus: str | None = None  # read request counters by PromQL here (a URL, or k8s://NS/SERVICE:PORT)
    otlp_endpoint: str | None = None  # up: where every container's OpenTelemetry SDK exports (apply.py)
    images: Mapping[str, str] | None = None  # prebuilt service images on the nodes: nothing is built
    existing: bool = False  # up: --namespace exists already; down deletes the app, not the namespace
    app: str | None = None  # the app `build` uses when nothing is up

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> KubernetesOptions:
        """From the command line's values (commands/platform_options.py); `images_file` is read here. Every
        command takes them (their environment defaults reach a campaign's children whatever they run), so
        what only `up` uses is checked by `up`."""
        images_file: Path | None = values.get("images_file")
        return cls(kubeconfig=values.get("kubeconfig"), context=values.get("context"),
                   namespace=values.get("namespace"), adopt=values.get("adopt"), loader=values.get("loader"),
                   prometheus=values.get("prometheus"), otlp_endpoint=values.get("otlp_endpoint"),
                   existing=bool(values.get("existing")),
                   images=load_image_map(images_file) if images_file else None)


PlatformOptions = LocalOptions | KubernetesOptions

OPTIONS: dict[str, type[LocalOptions] | type[KubernetesOptions]] = {o.name: o for o in (LocalOptions,
                                                                                        KubernetesOptions)}
