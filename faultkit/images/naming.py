"""What an image says about itself: tag, labels, history, file names, all as an ordinary release.

An agent can list images, inspect their labels and history and read their files, so each is held to
faultkit's leakage rules (faultkit/catalog/rules/leakage.py): no giveaway word, and never the fault's id.
A build that would say either is refused before (tag, labels, file names, Dockerfile) or right after
(history, which the engine writes) the build, and a refused image is removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from faultkit.apps.descriptor import AppDescriptor
from faultkit.catalog.rules.leakage import find_words, giveaway_words
from faultkit.errors import InputError

TITLE = "org.opencontainers.image.title"
VENDOR = "org.opencontainers.image.vendor"
VERSION = "org.opencontainers.image.version"
REVISION = "org.opencontainers.image.revision"
BASE = "org.opencontainers.image.base.name"


def release_tag(app: AppDescriptor, service: str, revision: str) -> str:
    """`<app>/<service>:<version>-<12 hex of the context digest>`, like a release cut from a commit."""
    return f"{app.name}/{service}:{app.version}-{revision[:12]}"


def release_labels(app: AppDescriptor, service: str, revision: str, base: str) -> dict[str, str]:
    return {TITLE: service, VENDOR: app.name, VERSION: app.version, REVISION: revision, BASE: base}


def service_filter(app: AppDescriptor, service: str) -> dict[str, list[str]]:
    """Docker's label filter for every image of one service of one app."""
    return {"label": [f"{TITLE}={service}", f"{VENDOR}={app.name}"]}


def refuse_leaks(root: Path, items: Iterable[tuple[str, str]], fault_id: str | None = None) -> None:
    """Raise InputError for the first (where, text) that gives a fault away."""
    words = giveaway_words(root)
    for where, text in items:
        if fault_id and fault_id.lower() in text.lower():
            raise InputError(f"image {where}: {_short(text)!r} names the fault {fault_id!r}; an agent can read it")
        found = find_words(text, words)
        if found:
            raise InputError(
                f"image {where}: {found[0]!r} in {_short(text)!r} gives the fault away; an agent can read it "
                "(change the name or the value; the word list is in faultkit.toml [leakage])"
            )


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
