"""Services that Maven builds with Jib: a pom.xml using jib-maven-plugin, and no Dockerfile.

Bank of Anthos' Java services are built so upstream (`mvn compile jib:dockerBuild`). Here Maven runs
on this machine in a copy of the service folder (the checkout gets no target/), `package` runs the
service's unit tests (surefire) before anything is built, and Jib builds the image onto the local
engine FROM the base that images.from maps the pom's `<from><image>` to, read from the engine as
`docker://REF`, since nothing is pulled. Jib's images are reproducible (its files and the image carry
a fixed time), so the same source on the same base is the same image id. Maven and the docker CLI
must be installed (Jib loads the image with `docker load`); dependencies come from the user's Maven
repository and settings, as for any Maven build.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from faultkit.errors import InputError, PlatformError, Unsupported
from faultkit.process import run

PLUGIN = "jib-maven-plugin"
TIMEOUT = 1800  # a cold Maven repository downloads a Spring Boot service's dependencies first
_FAILED = re.compile(r"<<< (?:FAILURE|ERROR)! -+ in (\S+)")


def is_jib_project(folder: Path) -> bool:
    """A service folder Jib builds: a pom.xml naming jib-maven-plugin, and no Dockerfile."""
    pom = folder / "pom.xml"
    return not (folder / "Dockerfile").exists() and pom.is_file() and PLUGIN in pom.read_text(errors="replace")


def from_image(pom: Path) -> str:
    """The image the pom's jib-maven-plugin builds FROM (`<configuration><from><image>`)."""
    try:
        root = ET.parse(pom).getroot()
    except ET.ParseError as e:
        raise InputError(f"{pom}:{e.position[0]}: not well-formed XML ({e})") from None
    ns = root.tag.partition("}")[0] + "}" if root.tag.startswith("{") else ""
    for plugin in root.iter(f"{ns}plugin"):
        if plugin.findtext(f"{ns}artifactId") == PLUGIN:
            image = plugin.findtext(f"{ns}configuration/{ns}from/{ns}image")
            if image and image.strip():
                return image.strip()
    raise InputError(f"{pom}: {PLUGIN} names no <from><image>; say which image the service starts from")


class TestsFailed(Exception):
    """The Maven build's unit tests failed; `failing` are the test classes surefire named."""

    def __init__(self, failing: tuple[str, ...], output: str) -> None:
        super().__init__(", ".join(failing))
        self.failing, self.output = failing, output


def build(folder: Path, base_ref: str, tag: str, labels: dict[str, str]) -> str:
    """Run `mvn package jib:dockerBuild` on a copy of `folder`; the log. Raises TestsFailed when the
    build failed in its tests, PlatformError when it failed otherwise."""
    bad = [k for k, v in labels.items() if "," in k + v or "=" in k]
    if bad:
        raise InputError(f"label {bad[0]!r}: Jib takes labels as k=v,k=v; a comma or '=' in one cannot pass")
    if shutil.which("mvn") is None or shutil.which("docker") is None:
        raise Unsupported(f"{folder}: a Jib build needs Maven and the docker CLI here (Debian: maven, docker.io)")
    work = Path(tempfile.mkdtemp(prefix="jib-"))
    try:
        copy = work / folder.name
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("target", ".*"))
        cmd = ["mvn", "-B", "--no-transfer-progress", "package", "jib:dockerBuild",
               f"-Djib.from.image=docker://{base_ref}", f"-Djib.to.image={tag}",
               "-Djib.container.labels=" + ",".join(f"{k}={v}" for k, v in sorted(labels.items()))]
        result = run(cmd, cwd=copy, timeout=TIMEOUT)
        if not result.ok:
            failing = tuple(dict.fromkeys(_FAILED.findall(result.output)))
            if failing or "There are test failures" in result.output:
                raise TestsFailed(failing, result.output)
            errors = [ln for ln in result.output.splitlines() if ln.startswith("[ERROR]") and ln.strip() != "[ERROR]"]
            raise PlatformError(f"{folder.name}: mvn exit {result.code}: {(errors or [result.tail(1)])[0][:300]}")
        return result.output
    finally:
        shutil.rmtree(work, ignore_errors=True)
