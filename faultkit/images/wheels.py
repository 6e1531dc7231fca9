"""Python wheels into a base image built from Debian packages (`images: {base: {python: [...]}}`).

The requirements are resolved and installed on the host by pip, binary wheels only, for the image's
own Python (the suite's python3, read from the built root file system) and this machine's
architecture, into /usr/local/lib/python3.N/dist-packages of the root: Debian's python3 looks
there before its own packages, and nothing is fetched when a container starts. The files are then
byte-compiled by the image's python3 in a chroot, so the services start without compiling.
"""

from __future__ import annotations

import platform
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from faultkit.errors import InputError, PlatformError
from faultkit.process import run

_PYTHON = re.compile(r"^python(3\.\d+)$")
# manylinux_2_28 needs glibc 2.28 (Debian 10 and later); manylinux2014 (glibc 2.17) covers the rest
GLIBC_TAGS = ("manylinux2014", "manylinux_2_28")


def image_python(root: Path) -> str:
    """The version ("3.11") of the python3 in a root file system."""
    found = sorted(m.group(1) for p in (root / "usr" / "bin").glob("python3.*") if (m := _PYTHON.match(p.name)))
    if not found:
        raise InputError("images.base.python: the base has no python3; add python3 to images.base.packages")
    return found[-1]


def site_packages(version: str) -> str:
    return f"/usr/local/lib/python{version}/dist-packages"


def pip_command(requirements: Sequence[str], target: Path, version: str, machine: str = "") -> list[str]:
    machine = machine or platform.machine()
    platforms = [arg for tag in GLIBC_TAGS for arg in ("--platform", f"{tag}_{machine}")]
    return [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
            "--only-binary=:all:", "--implementation", "cp", "--python-version", version, *platforms,
            "--target", str(target), *requirements]


def install(root: Path, requirements: Sequence[str], timeout: float = 900) -> str:
    """Install the requirements into the root's python3; returns its version."""
    version = image_python(root)
    target = root / site_packages(version).lstrip("/")
    target.mkdir(parents=True, exist_ok=True)
    done = run(pip_command(requirements, target, version), cwd=root, timeout=timeout)
    if not done.ok:
        raise PlatformError(f"images.base.python: pip could not install {' '.join(requirements)} for Python "
                            f"{version}: exit {done.code}: {' | '.join(done.tail(3).splitlines())}")
    compiled = run(["chroot", str(root), f"/usr/bin/python{version}", "-m", "compileall", "-q",
                    site_packages(version)], cwd=root, timeout=timeout)
    if not compiled.ok:
        raise PlatformError(f"images.base.python: byte-compiling in the image failed: exit {compiled.code}: "
                            f"{' | '.join(compiled.tail(3).splitlines())}")
    return version
