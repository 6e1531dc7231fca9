"""images.instrument, read and planned without an engine: which service gets which layer, what the
layer's Dockerfile sets, and that the instrumented image is a release of its own (the builds on the
real engine are in test_instrument_build.py and test_jib_build.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from faultkit.apps.descriptor import Instrumentation, load_app
from faultkit.errors import InputError
from faultkit.images import instrument
from faultkit.workspace import Workspace
from tests.helpers.shipped import minishop_copy

AGENT = "io.opentelemetry.javaagent:opentelemetry-javaagent:2.21.0"
PYTHON = ["opentelemetry-distro==0.66b1", "opentelemetry-exporter-otlp-proto-http==1.45.1"]


def _app(tmp_path: Path, instrument_cfg: dict[str, Any] | None, **services: dict[str, Any]):
    def edit(data: dict[str, Any]) -> None:
        if instrument_cfg is not None:
            data["images"]["instrument"] = instrument_cfg
        for s in data["services"]:
            s.update(services.get(s["name"], {}))

    minishop_copy(tmp_path / "repo", edit, skip=("src",))
    return load_app(Workspace(root=tmp_path / "repo", state_dir=tmp_path / "state"), "minishop")


def test_each_service_gets_its_languages_layer_unless_it_opts_out(tmp_path: Path):
    app = _app(tmp_path, {"java": AGENT, "python": PYTHON}, email={"language": "java"},
               currency={"build": {"instrument": False}}, shipping={"language": "go"})
    assert app.instrument == Instrumentation(AGENT, tuple(PYTHON))
    assert instrument.planned(app, "email") == instrument.Layer("java", (AGENT,))
    assert instrument.planned(app, "payment") == instrument.Layer("python", tuple(PYTHON))
    assert instrument.planned(app, "currency") is None  # build.instrument: false
    assert instrument.planned(app, "shipping") is None  # no entry for its language


def test_without_images_instrument_nothing_is_added_and_the_revision_is_the_plain_ones(tmp_path: Path):
    app = _app(tmp_path, None)
    assert app.instrument == Instrumentation() and instrument.planned(app, "payment") is None
    assert instrument.revision("ab" * 32, None) == "ab" * 32
    java, python = instrument.Layer("java", (AGENT,)), instrument.Layer("python", tuple(PYTHON))
    revisions = {instrument.revision("ab" * 32, java), instrument.revision("ab" * 32, python),
                 instrument.revision("cd" * 32, java),
                 instrument.revision("ab" * 32, instrument.Layer("java", (AGENT.replace("2.21.0", "2.20.1"),)))}
    assert len(revisions) == 4 and "ab" * 32 not in revisions  # a new agent is a new release, never a moved tag


@pytest.mark.parametrize(("cfg", "where"), [
    ({"java": "opentelemetry-javaagent-2.21.0.jar"}, "images.instrument.java"),
    ({"python": ["opentelemetry-distro"]}, r"images.instrument.python\[0\]"),  # unpinned: not reproducible
    ({"ruby": ["x==1"]}, "images.instrument.ruby"),
    ({}, "images.instrument"),
])
def test_a_wrong_entry_is_refused_with_its_line(tmp_path: Path, cfg: dict[str, Any], where: str):
    with pytest.raises(InputError, match=rf"app.yaml:\d+: {where}: "):
        _app(tmp_path, cfg)


def test_the_layer_names_the_service_exports_by_otlp_http_and_keeps_the_images_own_options():
    text = instrument.dockerfile("shop/pay:1-ab", "pay", {"JAVA_TOOL_OPTIONS": "-javaagent:/opt/a.jar"},
                                 (("a.jar", "/opt/a.jar"),))
    assert text.splitlines() == [
        "FROM shop/pay:1-ab", "COPY a.jar /opt/a.jar",
        'ENV OTEL_SERVICE_NAME="pay" OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf" OTEL_LOGS_EXPORTER="none" '
        'JAVA_TOOL_OPTIONS="-javaagent:/opt/a.jar"']
    assert "faultkit" not in text.lower()


def test_the_images_own_packages_are_kept_at_their_versions_unless_named():
    have = {"protobuf": "5.28.2", "Flask": "3.0.3", "opentelemetry_api": "1.27.0", "odd": "2:1.0-deb"}
    named = ("opentelemetry-api==1.27.0", "protobuf==4.25.5", "opentelemetry-distro==0.48b0")
    assert instrument.constraints_for(have, named) == "Flask==3.0.3\n"  # a version pip cannot pin is left out
