"""What `apps import` may write: only a descriptor that `apps show` accepts (issue 32).

A workload of the manifests becomes a service of the descriptor. One that cannot (no name, a name
that is not a Kubernetes object name such as `../../etc` or a 300-character or Cyrillic one, a port
above 65535, a Deployment with only initContainers) is skipped with a one-line reason, checked by
the same app schema `apps show` reads the descriptor with. The whole descriptor is then checked
once more exactly as `apps show` loads it, before anything is written.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from faultkit.schema import fast_part, validator

# a Kubernetes object name (RFC 1123 label): what a workload's name must be to be deployed at all
K8S_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")


@cache
def _service_validator() -> Any:
    """The app schema's rule for one item of `services`, as `apps show` applies it."""
    full = validator("app")
    return type(full)(full.schema["properties"]["services"]["items"])


def service_problem(service: dict[str, Any]) -> str | None:
    """Why this would-be `services` item cannot be in a descriptor; None when it can."""
    workload = service["workload"]["name"]
    if not workload:
        return "has no metadata.name"
    if not K8S_NAME.fullmatch(workload):
        return (f"name {_shown(repr(workload))} is not a Kubernetes object name "
                "(lower-case letters, digits and -, at most 63)")
    if fast_part("app", "properties", "services", "items")(service):
        return None  # the compiled check settles the valid ones; jsonschema explains the others
    errors = sorted(_service_validator().iter_errors(service), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return None
    first = errors[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path).lstrip(".")
    return f"{where or 'service'}: {_shown(first.message)}"


def _shown(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
