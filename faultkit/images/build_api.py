"""One `docker build` through the SDK's low-level API, keeping what the engine streams back."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

_STEP_IMAGE = re.compile(r"^ ---> ([0-9a-f]{12,64})\s*$", re.MULTILINE)


@dataclass(frozen=True)
class BuildResult:
    image_id: str | None  # sha256:<hex> when the build succeeded
    steps: tuple[str, ...]  # short ids of every step's image, for removing what a failed build left
    log: str
    error: str | None


def build(c: Any, context: bytes, tag: str | None = None, buildargs: dict[str, str] | None = None,
          labels: dict[str, str] | None = None) -> BuildResult:
    """Build from an in-memory context tar (with its Dockerfile) on the engine's classic builder,
    which the SDK drives and whose cache gives an unchanged build its old image id back."""
    log: list[str] = []
    image_id: str | None = None
    error: str | None = None
    for chunk in c.api.build(fileobj=io.BytesIO(context), custom_context=True, tag=tag, buildargs=buildargs or {},
                             labels=labels or {}, rm=True, forcerm=True, pull=False, decode=True):
        if "stream" in chunk:
            log.append(chunk["stream"])
        if "aux" in chunk and "ID" in chunk["aux"]:
            image_id = chunk["aux"]["ID"]
        if "error" in chunk:
            error = chunk["error"].strip()
    text = "".join(log)
    return BuildResult(image_id if error is None else None, tuple(_STEP_IMAGE.findall(text)), text, error)
