"""The service's own CI (its lint and unit tests, the descriptor's `build:` commands) run in its image.

A throw-away image FROM the service image adds the tests, the service's lint settings and the test
tools, then RUNs the two commands: what is checked is the shipped image's own files, Python and
layout. The tools are this machine's pytest and ruff (the versions validation runs today), copied in
as a `pip install --target` folder: there is no package index in a build, Debian bookworm has no
ruff, and the host's tools run unchanged on the image's Python 3.11 (pytest is pure Python; ruff is a
binary needing only glibc). The throw-away image is removed afterwards; that an image passed with
given tests is kept in the user's cache (checks_file()), keyed by the image id and the digest of the
test context: the same image with the same tests passed already, whichever state folder or checkout
asks (a campaign's instances, a second `up`), so it is not run again. A failure is never kept.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import os
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

from faultkit.errors import CheckFailed, FaultkitError
from faultkit.images import engine
from faultkit.images.build_api import build
from faultkit.images.context import context_tar
from faultkit.yamlio import atomic_write

TOOLS = ("pytest", "ruff")
TOOLS_DIR = "/opt/ci"
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


@lru_cache(maxsize=1)
def tool_files() -> dict[str, Path]:
    """(path under /opt/ci, file on this machine) for the test tools and what they need to run
    (read once per process: the installed tools do not change under a running build)."""
    out: dict[str, Path] = {}
    todo, seen = list(TOOLS), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            raise FaultkitError(f"{name}: not installed; the in-image CI copies it from here (pip install {name})") \
                from None
        for f in dist.files or ():
            rel = f.as_posix()
            if "__pycache__" in rel or rel.endswith(".pyc"):
                continue
            if rel.startswith("../"):  # a script outside site-packages: only the ruff binary is needed
                if Path(rel).name != "ruff":
                    continue
                rel = "bin/ruff"
            path = Path(str(f.locate()))
            if path.is_file():
                out[rel] = path
        for req in dist.requires or ():
            r = Requirement(req)
            if r.marker is None or r.marker.evaluate({"extra": ""}):
                todo.append(r.name)
    return out


def ci_context(service_files: list[tuple[str, Path]], image_id: str, workdir: str,
               lint: tuple[str, ...], test: tuple[str, ...], package: str | None = None) -> bytes:
    """The throw-away image's context: tests, lint settings, tools and a Dockerfile. A service folder
    that is a Python package (`package`: its name in the checkout) gets a link of that name beside the
    working folder: pytest puts the first folder above a package's tests that is not itself a package
    first on the path, so `import contacts.contacts` finds the folder there, as it does in the
    checkout (Bank of Anthos' contacts tests; in its image the folder is /app)."""
    own = [(rel, p) for rel, p in service_files if rel.startswith("tests/") or rel == "ruff.toml"]
    tools = [(f"ci/{rel}", p) for rel, p in sorted(tool_files().items())]
    lines = [f"FROM {image_id}", f"COPY ci/ {TOOLS_DIR}/"]
    if any(rel.startswith("tests/") for rel, _ in own):
        lines.append(f"COPY tests/ {workdir.rstrip('/')}/tests/")
    if any(rel == "ruff.toml" for rel, _ in own):
        lines.append(f"COPY ruff.toml {workdir.rstrip('/')}/")
    folder = workdir.rstrip("/")
    links = {f"packages/{package}": folder} if package and folder else {}
    if links:
        lines.append(f"COPY packages/ {folder.rpartition('/')[0]}/")
    # the tools first, then whatever path the image sets itself (its dependencies may live there)
    lines.append(f"ENV PYTHONPATH={TOOLS_DIR}${{PYTHONPATH:+:$PYTHONPATH}} PYTHONDONTWRITEBYTECODE=1")
    lines += [f"RUN {json.dumps(list(cmd))}" for cmd in (lint, test) if cmd]
    return context_tar(own + tools, {"Dockerfile": ("\n".join(lines) + "\n").encode()}, links)


def package_name(source: str, service_files: list[tuple[str, Path]]) -> str | None:
    """The service folder's name when the folder is a Python package (it holds __init__.py) whose name
    hides no standard module (a folder `email` linked so would break every `import email`)."""
    name = Path(source).name
    if not name.isidentifier() or name in sys.stdlib_module_names:
        return None
    return name if any(rel == "__init__.py" for rel, _ in service_files) else None


def checks_file(environ: dict[str, str] | None = None) -> Path:
    """Where passed checks are kept: $FAULTKIT_CACHE_HOME, else $XDG_CACHE_HOME/faultkit, else ~/.cache/faultkit."""
    env = os.environ if environ is None else environ
    home = env.get("FAULTKIT_CACHE_HOME") or str(Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "faultkit")
    return Path(home) / "image-checks.json"


def run_ci(c: Any, service: str, image_id: str, service_files: list[tuple[str, Path]],
           lint: tuple[str, ...], test: tuple[str, ...], package: str | None = None) -> str:
    """'passed' after running lint and tests in a throw-away image, 'passed-before' when this image
    passed these exact tests already; raises CheckFailed naming the failing tests."""
    if not lint and not test:
        return "none"
    workdir = c.images.get(image_id).attrs["Config"].get("WorkingDir") or "/"
    ctx = ci_context(service_files, image_id, workdir, lint, test, package)
    key = hashlib.sha256(f"{image_id}\0{hashlib.sha256(ctx).hexdigest()}".encode()).hexdigest()
    record = checks_file()
    passed = _read(record)
    if key in passed:
        return "passed-before"
    result = build(c, ctx)
    engine.remove_images(c, [*result.steps, *([result.image_id] if result.image_id else [])], keep=[image_id])
    if result.error:
        what = "lint" if lint and _ran_last(result.log, lint) else "unit tests"
        failing = tuple(dict.fromkeys(_FAILED.findall(result.log))) if what == "unit tests" else ()
        raise CheckFailed(service, what, failing, result.log)
    passed[key] = {"service": service, "image": image_id}
    record.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(record, json.dumps(passed, indent=1, sort_keys=True) + "\n")
    return "passed"


def _ran_last(log: str, cmd: tuple[str, ...]) -> bool:
    """Was `cmd` the step that failed (the last RUN step the log shows)?"""
    steps = re.findall(r"^Step \d+/\d+ : (.*)$", log, re.MULTILINE)
    return bool(steps) and steps[-1].strip() == f"RUN {json.dumps(list(cmd))}"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}
