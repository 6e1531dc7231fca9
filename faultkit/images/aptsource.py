"""The Debian mirror this machine's apt is configured with, so images are built from the same one.

Read from /etc/apt/sources.list and /etc/apt/sources.list.d/ (one-line `.list` and deb822 `.sources`
files); FAULTKIT_APT_MIRROR overrides it. Nothing names a host in faultkit itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from faultkit.errors import PlatformError

Source = tuple[str, tuple[str, ...], tuple[str, ...]]  # (uri, suites, components)

APT_DIR = Path("/etc/apt")


def mirror(suite: str, apt_dir: Path = APT_DIR) -> str:
    """The URI of the first configured `deb` source that carries `suite` (main component)."""
    if os.environ.get("FAULTKIT_APT_MIRROR"):
        return os.environ["FAULTKIT_APT_MIRROR"]
    for uri, suites, components in sources(apt_dir):
        if suite in suites and (not components or "main" in components):
            return uri
    raise PlatformError(
        f"{apt_dir}: no apt source carries Debian {suite!r}; add one or set FAULTKIT_APT_MIRROR to a Debian mirror"
    )


def sources(apt_dir: Path = APT_DIR) -> list[Source]:
    """(uri, suites, components) of every `deb` source, in apt's reading order."""
    files = [apt_dir / "sources.list"] if (apt_dir / "sources.list").is_file() else []
    parts = apt_dir / "sources.list.d"
    files += sorted(parts.glob("*.list")) + sorted(parts.glob("*.sources"))
    out: list[Source] = []
    for path in files:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        out += _deb822(text) if path.suffix == ".sources" else _one_line(text)
    return out


def _one_line(text: str) -> list[Source]:
    out: list[Source] = []
    for line in text.splitlines():
        line = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0])  # drop the [arch=... signed-by=...] options
        words = line.split()
        if words and words[0] == "deb":
            words = words[1:]
            if len(words) >= 2:
                out.append((words[0], (words[1],), tuple(words[2:])))
    return out


def _deb822(text: str) -> list[Source]:
    out: list[Source] = []
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line or line[:1].isspace():
                continue
            key, value = line.split(":", 1)
            fields[key.strip().lower()] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes").lower() == "no":
            continue
        suites = tuple(fields.get("suites", "").split())
        for uri in fields.get("uris", "").split():
            out.append((uri, suites, tuple(fields.get("components", "").split())))
    return out
