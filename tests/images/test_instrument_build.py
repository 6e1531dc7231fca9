"""images.instrument.python on the real engine: the requirements installed on this machine as wheels
for the image's own Python, added over the image the service's Dockerfile built (its unit tests run
there first), and every python3 the image starts is instrumented without its code or command
changed: a plain urllib call in `python3 -c` gives a span named for the service. A code fault's
marker is found in it, and the plain image it is built over is not taken for an earlier image."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.images import instrument, naming
from faultkit.images.marker import check_marker
from faultkit.images.service import build_service
from faultkit.platforms.imagebuilds import ImageBuilds
from faultkit.workspace import Workspace
from tests.helpers.shipped import minishop_copy

pytestmark = [pytest.mark.live, pytest.mark.exclusive, pytest.mark.alone]

# the versions of minishop's base (app.yaml images.base.python), and urllib's instrumentation
REQUIREMENTS = ["opentelemetry-api==1.45.1", "opentelemetry-sdk==1.45.1", "opentelemetry-distro==0.66b1",
                "opentelemetry-exporter-otlp-proto-http==1.45.1", "opentelemetry-instrumentation-urllib==0.66b1"]
CALL = ("import urllib.request\ntry:\n    urllib.request.urlopen('http://127.0.0.1:9/quote', timeout=2)\n"
        "except OSError:\n    pass\n")


def test_every_python_the_image_starts_sends_spans_named_for_the_service(tmp_path: Path, docker_client: Any) -> None:
    c = docker_client
    root = tmp_path / "repo"
    minishop_copy(root, lambda data: data["images"].update(instrument={"python": REQUIREMENTS}))
    ws = Workspace(root=root, state_dir=tmp_path / "state")
    app = load_app(ws, "minishop")
    before = {i.id for i in c.images.list(all=True)}
    built = build_service(ws, app, "email", client=c)
    try:
        # the plain image is minishop's own email image, which the release's build may have checked already
        assert built.ci in ("passed", "passed-before")
        assert built.tag == naming.release_tag(app, "email", built.revision.removeprefix("sha256:"))
        config = c.api.inspect_image(built.id)["Config"]
        env = dict(e.split("=", 1) for e in config["Env"])
        assert env["PYTHONPATH"].split(":")[:2] == [instrument.SITECUSTOMIZE, instrument.PYTHON_HOME]
        assert config["Cmd"] == ["python3", "main.py"] and not config["Entrypoint"]  # nothing wrapped
        out = c.containers.run(built.id, command=["python3", "-c", CALL], remove=True, network_disabled=True,
                               environment={"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"})
        spans = _objects(out.decode())
        assert [(s["name"], s["kind"], s["resource"]["attributes"]["service.name"]) for s in spans] == [
            ("GET", "SpanKind.CLIENT", "email")], out
        assert build_service(ws, app, "email", client=c).id == built.id  # the same context, the same image
        # the service's code is in the image's own layers; the plain image under it is no earlier image
        found = check_marker(c, app, "email", built.id, "def send_confirmation(req: Request)")
        assert found.found_in == ("/app/main.py",) and found.earlier == () and not found.earlier_with_marker
        # and so for the platforms' marker stage: the plain image is no build of its own
        layers = c.images.get(built.id).attrs["RootFS"]["Layers"]
        under = [i.id for i in c.images.list(filters=naming.service_filter(app, "email"))
                 if i.id != built.id and layers[:len(i.attrs["RootFS"]["Layers"])] == i.attrs["RootFS"]["Layers"]]
        listed = [b.id for b in ImageBuilds(ws, app, client=c).builds("email")]
        assert under and built.id in listed and not set(under) & set(listed)
    finally:  # the instrumented image, then the one it is built over
        mine = [i.id for i in c.images.list(filters=naming.service_filter(app, "email"))]
        for image in sorted(set(mine) - before, key=lambda i: i != built.id):
            c.images.remove(image, force=True)


def _objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects the console exporter printed one after another, each over several lines."""
    decoder, out, at = json.JSONDecoder(), [], text.find("{")
    while at >= 0:
        obj, end = decoder.raw_decode(text, at)
        out.append(obj)
        at = text.find("{", end)
    return out
