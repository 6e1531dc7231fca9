"""An application's own Dockerfile, built as it is, with its FROM images mapped to bases made here.

faultkit's own Dockerfiles take their base as `ARG BASE`. An application nobody here wrote starts
`FROM python:3.12-slim` or `FROM eclipse-temurin:17-jre AS run`: images of a registry this machine
may not reach, and nothing is pulled. The descriptor's `images.from` maps each such reference to a
base built from Debian packages (or to an image the user has on the engine), and the build runs the
Dockerfile with those FROM lines rewritten in the build context's copy; the source is unchanged.

A stage named by an earlier `FROM ... AS NAME`, and `scratch`, are not images. ARGs declared before
the first FROM are substituted with their defaults, as the builder would. An image that is neither
mapped nor a stage is refused before anything is built, with its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from faultkit.errors import InputError

_FROM = re.compile(r"^(?P<lead>\s*FROM\s+(?:--\S+\s+)*)(?P<image>\S+)(?P<rest>(?:\s+AS\s+(?P<stage>\S+))?\s*)$",
                   re.IGNORECASE)
_ARG = re.compile(r"^\s*ARG\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=(?P<value>\S*))?\s*$", re.IGNORECASE)
_VAR = re.compile(r"\$\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|\$(?P<bare>[A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class FromImage:
    line: int  # 1-based, in the Dockerfile
    image: str  # the reference, global ARG defaults substituted


def from_images(dockerfile: Path, text: str) -> list[FromImage]:
    """Every image the Dockerfile's FROM lines start from, in order (stages and `scratch` left out)."""
    stages: set[str] = set()
    out: list[FromImage] = []
    for i, m, image in _froms(text.splitlines()):
        if "$" in image:
            raise InputError(f"{dockerfile}:{i + 1}: FROM {m['image']}: an ARG without a default before the first "
                             "FROM; give it one, so the image is known before the build")
        if image.lower() != "scratch" and image not in stages:
            out.append(FromImage(i + 1, image))
        if m["stage"]:
            stages.add(m["stage"])
    return out


def rewrite(text: str, local: dict[str, str]) -> str:
    """The Dockerfile with each FROM image in `local` (upstream reference -> local one) replaced."""
    lines = text.splitlines(keepends=True)
    for i, m, image in list(_froms(lines)):
        if image in local:
            end = lines[i][len(lines[i].rstrip("\r\n")):]
            lines[i] = f"{m['lead']}{local[image]}{m['rest']}{end}"
    return "".join(lines)


def _froms(lines: list[str]) -> Iterator[tuple[int, re.Match[str], str]]:
    """(index, match, image with the global ARG defaults substituted) of each FROM line."""
    args: dict[str, str] = {}
    seen_from = False
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        arg = _ARG.match(body)
        if arg and not seen_from:
            _declare(args, arg["name"], arg["value"])
        elif m := _FROM.match(body):
            seen_from = True
            yield i, m, _substitute(m["image"], args)


def unmapped(dockerfile: Path, images: list[FromImage], mapped: set[str]) -> None:
    """Refuse the first FROM image `images.from` does not map."""
    for f in images:
        if f.image not in mapped:
            raise InputError(f"{dockerfile}:{f.line}: FROM {f.image} is not mapped in the descriptor's images.from, "
                             "and nothing is pulled; map it to Debian packages to build it from, or to an image on "
                             "this engine")


def _declare(args: dict[str, str], name: str, value: str | None) -> None:
    """A global ARG: with a default, its value; without one, unknown (nothing is passed to the build)."""
    if value is None:
        args.pop(name, None)
    else:
        args[name] = _substitute(value, args)


def _substitute(value: str, args: dict[str, str]) -> str:
    return _VAR.sub(lambda m: args.get(m["braced"] or m["bare"], m.group(0)), value)
