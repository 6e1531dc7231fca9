"""A service Jib builds (a Maven project, no Dockerfile), on the real engine with the real Maven: its
unit tests run in the build, the image starts FROM the base images.from maps the pom's image to (a
JRE from Debian packages, kept on the engine as bases are), it runs, and it is the same image when
built again; a failing test rejects it with the test named and leaves no image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from faultkit.apps.descriptor import load_app
from faultkit.images import naming
from faultkit.images.ci import CheckFailed
from faultkit.images.service import build_service
from faultkit.workspace import Workspace
from tests.helpers.shipped import minishop_copy
from tests.images.jib_project import JRE, TEST, write_project

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]

JRE_BASE = {"suite": "bookworm", "packages": ["openjdk-17-jre-headless"]}
AGENT_VERSION = "2.21.0"
AGENT = f"io.opentelemetry.javaagent:opentelemetry-javaagent:{AGENT_VERSION}"


def _workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "repo"
    minishop_copy(root, lambda data: data["images"].update({"from": {JRE: JRE_BASE}}))
    write_project(root / "apps" / "minishop" / "src" / "email")
    return Workspace(root=root, state_dir=tmp_path / "state")


def test_a_jib_service_is_tested_built_on_the_mapped_jre_and_runs(tmp_path: Path, docker_client: Any) -> None:
    c = docker_client
    ws = _workspace(tmp_path)
    app = load_app(ws, "minishop")
    built = build_service(ws, app, "email", client=c)
    try:
        assert built.ci == "passed" and built.base.startswith("minishop/base:bookworm-")
        config = c.api.inspect_image(built.id)["Config"]
        assert config["Labels"]["org.opencontainers.image.title"] == "email"
        assert config["Labels"]["org.opencontainers.image.base.name"] == built.base
        base_layers = c.api.inspect_image(built.base)["RootFS"]["Layers"]
        assert c.api.inspect_image(built.id)["RootFS"]["Layers"][:len(base_layers)] == base_layers
        assert c.containers.run(built.id, remove=True).decode().strip() == "hello from the image"
        again = build_service(ws, app, "email", client=c)
        assert (again.id, again.cached, again.ci) == (built.id, True, "passed-before")  # not built again
        c.images.remove(built.id)  # gone: Maven and Jib run again and make the same image (reproducible)
        rebuilt = build_service(ws, app, "email", client=c)
        assert (rebuilt.id, rebuilt.cached, rebuilt.ci) == (built.id, False, "passed")
        assert not (ws.root / "apps" / "minishop" / "src" / "email" / "target").exists()  # built in a copy
    finally:
        c.images.remove(built.id, force=True)


def test_a_failing_unit_test_rejects_the_jib_build_with_the_test_named(tmp_path: Path, docker_client: Any) -> None:
    ws = _workspace(tmp_path)
    test = ws.root / "apps" / "minishop" / "src" / "email" / "src" / "test" / "java" / "shop" / "GreetingTest.java"
    test.write_text(TEST.replace('"hello you"', '"hi you"'))
    before = {i.id for i in docker_client.images.list(all=True)}
    with pytest.raises(CheckFailed, match=r"email: the service's unit tests failed in its Maven build: shop.Greeting"):
        build_service(ws, load_app(ws, "minishop"), "email", client=docker_client)
    assert {i.id for i in docker_client.images.list(all=True)} - before <= {
        docker_client.images.get(ref).id for ref in _bases(docker_client)}


def test_an_instrumented_jib_service_runs_with_the_opentelemetry_java_agent(tmp_path: Path, docker_client: Any) -> None:
    """images.instrument.java: the agent from Maven, over the image Jib built (which keeps its own
    release tag); every JVM of the image loads it, and the image says what it is named."""
    c = docker_client
    ws = _workspace(tmp_path)
    app_yaml = ws.root / "apps" / "minishop" / "app.yaml"
    data = yaml.safe_load(app_yaml.read_text())
    data["images"]["instrument"] = {"java": AGENT}
    next(s for s in data["services"] if s["name"] == "email")["language"] = "java"
    app_yaml.write_text(yaml.safe_dump(data, sort_keys=False))
    before = {i.id for i in c.images.list(all=True)}
    built = build_service(ws, load_app(ws, "minishop"), "email", client=c)
    try:
        new = {i.id: i for i in c.images.list(filters=naming.service_filter(load_app(ws, "minishop"), "email"))
               if i.id not in before}
        plain = next(i for i in new.values() if i.id != built.id)  # what Jib built, under its own tag
        assert built.ci == "passed" and set(new) == {built.id, plain.id}
        labels = c.api.inspect_image(built.id)["Config"]["Labels"]
        assert labels[naming.REVISION] == built.revision.removeprefix("sha256:") != plain.labels[naming.REVISION]
        env = dict(e.split("=", 1) for e in c.api.inspect_image(built.id)["Config"]["Env"])
        assert env["OTEL_SERVICE_NAME"] == "email" and env["JAVA_TOOL_OPTIONS"].startswith("-javaagent:/opt/")
        out = c.containers.run(built.id, remove=True, stdout=True, stderr=True, network_disabled=True,
                               environment={"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}).decode()
        assert "hello from the image" in out and f"opentelemetry-javaagent - version: {AGENT_VERSION}" in out, out
        again = build_service(ws, load_app(ws, "minishop"), "email", client=c)
        assert (again.id, again.cached, again.ci) == (built.id, True, "passed-before")
    finally:  # the instrumented image, then the one it is built over
        mine = [i.id for i in c.images.list(filters=naming.service_filter(load_app(ws, "minishop"), "email"))]
        for image in sorted(set(mine) - before, key=lambda i: i != built.id):
            c.images.remove(image, force=True)


def _bases(c: Any) -> list[str]:
    return [t for i in c.images.list(name="minishop/base") for t in i.tags]
