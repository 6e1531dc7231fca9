"""Zero-code OpenTelemetry on a service's image (app.yaml `images.instrument`), by its language.

The image its Dockerfile or Jib built (and whose unit tests passed) gets one more image over it, so
the service reports through OpenTelemetry without a change to its code, as the benchmark's
applications were "rebuilt with OpenTelemetry instrumentation":

- java: the OpenTelemetry Java agent, the jar the user's Maven resolves for the given coordinates
  (`mvn dependency:copy`, from the repositories and settings any Maven build of theirs uses), at
  /opt/opentelemetry/<artifact>.jar, loaded by every JVM through JAVA_TOOL_OPTIONS;
- python: the given requirements (the distro, an OTLP exporter, the instrumentations of the
  libraries the service uses, at the versions of its own OpenTelemetry packages), installed on this
  machine by pip as wheels for the image's Python (wheels.py) into /opt/opentelemetry/python, and
  started by the auto-instrumentation's sitecustomize on PYTHONPATH, the way the OpenTelemetry
  Operator injects it: no command is wrapped, so a manifest's `command:` keeps it.

Both name the service (OTEL_SERVICE_NAME) and export by OTLP/HTTP to wherever the platform points
OTEL_EXPORTER_OTLP_ENDPOINT (kubernetes: `up` with an OTLP endpoint); logs stay on stdout, where the
platforms read them. Nothing is fetched inside an image, and nothing here names faultkit.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from faultkit.apps.descriptor import AppDescriptor
from faultkit.errors import PlatformError, Unsupported
from faultkit.images import engine, wheels
from faultkit.images.build_api import build
from faultkit.images.context import context_tar
from faultkit.process import run

HOME = "/opt/opentelemetry"
PYTHON_HOME = f"{HOME}/python"
# where the auto-instrumentation's sitecustomize.py lives in an installed opentelemetry-instrumentation
SITECUSTOMIZE = f"{PYTHON_HOME}/opentelemetry/instrumentation/auto_instrumentation"
TIMEOUT = 900
COMMON_ENV = {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_LOGS_EXPORTER": "none"}
# the distro's defaults spelled out; the stable HTTP conventions give http.server.request.duration in
# seconds, the metric the Java agent and minishop report, so one signals: setting reads them all
PYTHON_ENV = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_SEMCONV_STABILITY_OPT_IN": "http"}


@dataclass(frozen=True)
class Layer:
    language: str  # "java" or "python"
    packages: tuple[str, ...]  # java: the agent's Maven coordinates; python: pip requirements

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps([self.language, list(self.packages)]).encode()).hexdigest()


def planned(app: AppDescriptor, service: str) -> Layer | None:
    """The layer `service`'s image gets: its language's entry in images.instrument, unless its
    build.instrument is false or its language has none."""
    spec = app.service(service)
    if not spec.instrument:
        return None
    if spec.language == "java" and app.instrument.java:
        return Layer("java", (app.instrument.java,))
    if spec.language == "python" and app.instrument.python:
        return Layer("python", app.instrument.python)
    return None


def revision(plain: str, layer: Layer | None) -> str:
    """The revision of the instrumented image: the plain image's, and what was added over it."""
    return plain if layer is None else hashlib.sha256(f"{plain}\0{layer.digest}".encode()).hexdigest()


def add(c: Any, layer: Layer, service: str, plain: str, tag: str,
        labels: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """(image id, step ids) of `plain` (a tag) with `layer` added, tagged `tag` with `labels`."""
    work = Path(tempfile.mkdtemp(prefix="otel-"))
    try:
        if layer.language == "java":
            files, text = _java(layer.packages[0], plain, work, service)
        else:
            files, text = _python(c, layer.packages, plain, work, service)
        result = build(c, context_tar(files, {"Dockerfile": text.encode()}), tag=tag, labels=labels)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if result.error or not result.image_id:
        engine.remove_images(c, result.steps, keep=[c.images.get(plain).id])
        raise PlatformError(f"{service}: adding the OpenTelemetry {layer.language} layer failed: {result.error}")
    return result.image_id, result.steps


def dockerfile(plain: str, service: str, env: dict[str, str], copies: tuple[tuple[str, str], ...]) -> str:
    """FROM the plain image, COPY each (context path, image path), ENV the service's name and `env`."""
    lines = [f"FROM {plain}"] + [f"COPY {src} {dst}" for src, dst in copies]
    values = {"OTEL_SERVICE_NAME": service, **COMMON_ENV, **env}
    lines.append("ENV " + " ".join(f"{k}={json.dumps(v)}" for k, v in values.items()))
    return "\n".join(lines) + "\n"


def _java(coordinates: str, plain: str, work: Path, service: str) -> tuple[list[tuple[str, Path]], str]:
    artifact = coordinates.split(":")[1]
    if shutil.which("mvn") is None:
        raise Unsupported(f"{service}: the OpenTelemetry Java agent comes from Maven here; install it (Debian: maven)")
    done = run(["mvn", "-B", "-q", "--no-transfer-progress", "dependency:copy", f"-Dartifact={coordinates}",
                f"-DoutputDirectory={work}", "-Dmdep.stripVersion=true"], cwd=work, timeout=TIMEOUT)
    jar = work / f"{artifact}.jar"
    if not done.ok or not jar.is_file():
        raise PlatformError(f"images.instrument.java: Maven could not fetch {coordinates}: exit {done.code}: "
                            f"{' | '.join(done.tail(3).splitlines())}")
    target = f"{HOME}/{artifact}.jar"
    # options the image already gives every JVM stay, after the agent
    env = {"JAVA_TOOL_OPTIONS": f"-javaagent:{target}${{JAVA_TOOL_OPTIONS:+ $JAVA_TOOL_OPTIONS}}"}
    return [(jar.name, jar)], dockerfile(plain, service, env, ((jar.name, target),))


def _python(c: Any, requirements: tuple[str, ...], plain: str, work: Path,
            service: str) -> tuple[list[tuple[str, Path]], str]:
    target = work / "python"
    version, have = _image_python(c, plain, service)
    constraints = work / "constraints.txt"
    constraints.write_text(constraints_for(have, requirements))
    done = run([*wheels.pip_command(requirements, target, version), "--constraint", str(constraints)],
               cwd=work, timeout=TIMEOUT)
    if not done.ok:
        raise PlatformError(f"{service}: images.instrument.python: pip could not install {' '.join(requirements)} "
                            f"for the image's Python {version} and packages: exit {done.code}: "
                            f"{' | '.join(done.tail(3).splitlines())}")
    files = [(f"python/{p.relative_to(target).as_posix()}", p) for p in sorted(target.rglob("*")) if p.is_file()]
    env = {**PYTHON_ENV, "PYTHONPATH": f"{SITECUSTOMIZE}:{PYTHON_HOME}${{PYTHONPATH:+:$PYTHONPATH}}"}
    return files, dockerfile(plain, service, env, (("python", PYTHON_HOME),))


def constraints_for(have: dict[str, str], requirements: tuple[str, ...]) -> str:
    """pip constraints that keep what the image already has at its version unless the requirements
    name it, so the packages that come first on PYTHONPATH change nothing the service imports itself
    beyond what the user asked for."""
    named = {canonicalize_name(Requirement(r).name) for r in requirements}
    return "".join(f"{name}=={v}\n" for name, v in sorted(have.items())
                   if canonicalize_name(name) not in named and _pinnable(v))


def _pinnable(version: str) -> bool:
    """A version pip can pin (a distribution installed by other means may carry one it cannot)."""
    try:
        Version(version)
    except InvalidVersion:
        return False
    return True


_ASK = ("import importlib.metadata as m, json, sys\n"
        "have = {d.metadata['Name']: d.version for d in m.distributions() if d.metadata['Name']}\n"
        "print(json.dumps(['%d.%d' % sys.version_info[:2], have]))\n")


@functools.lru_cache(maxsize=16)
def _image_python(c: Any, image: str, service: str) -> tuple[str, dict[str, str]]:
    """(version "3.11", {distribution: version}) of the image's python3, asked of the image itself."""
    try:
        out = c.containers.run(image, entrypoint=["python3", "-c", _ASK], command=[], remove=True,
                               network_disabled=True)
        version, have = json.loads(out.decode())
    except Exception as e:  # the engine's error says what failed: no python3, no such image
        raise PlatformError(f"{service}: images.instrument.python: cannot ask its image's python3: {e}") from None
    return str(version), {str(k): str(v) for k, v in have.items()}
