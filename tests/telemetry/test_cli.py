"""`telemetry` refusals that start nothing: they run in the fast tier."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

from tests.telemetry.conftest import TELEMETRY, stack_env, telemetry


def test_up_with_an_occupied_port_fails_in_one_line(tmp_path: Path) -> None:
    env = stack_env(tmp_path / "state")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env["FAULTKIT_TELEMETRY_PROMETHEUS_PORT"] = str(port)
        up = telemetry("up", env=env)
    assert up.returncode == 1
    assert up.stderr.splitlines() == [
        f"Error: telemetry up: port {port} (prometheus) on 127.0.0.1 is in use; set "
        "FAULTKIT_TELEMETRY_PROMETHEUS_PORT to a free port or stop what holds it"]
    assert telemetry("status", env=env).returncode == 1  # nothing was started


def test_env_and_status_of_a_stack_that_is_not_up(tmp_path: Path) -> None:
    env = stack_env(tmp_path / "state")
    exports = telemetry("env", env=env)
    assert (exports.returncode, exports.stdout) == (1, "")
    assert exports.stderr == ("Error: telemetry env: the stack is not running; start it with "
                              "`tools/telemetry/telemetry up`\n")
    status = telemetry("status", env=env)
    assert status.returncode == 1
    assert status.stdout.split() == ["jaeger", "not", "running", "prometheus", "not", "running"]


def test_down_with_nothing_up_is_fine_twice(tmp_path: Path) -> None:
    env = stack_env(tmp_path / "state")
    for _ in range(2):
        down = telemetry("down", env=env)
        assert (down.returncode, down.stdout) == (0, "telemetry: down (nothing was running)\n")


def test_a_port_that_is_not_a_number_is_named(tmp_path: Path) -> None:
    env = stack_env(tmp_path / "state")
    env["FAULTKIT_TELEMETRY_OTLP_HTTP_PORT"] = "43l8"
    status = telemetry("status", env=env)
    assert status.returncode == 1
    assert status.stderr == ("Error: telemetry: FAULTKIT_TELEMETRY_OTLP_HTTP_PORT='43l8' is not a port number "
                             "(1-65535)\n")


def test_a_named_jaeger_that_does_not_exist_is_named(tmp_path: Path) -> None:
    env = stack_env(tmp_path / "state")
    env["FAULTKIT_TELEMETRY_JAEGER"] = str(tmp_path / "no-such-jaeger")
    up = telemetry("up", env=env)
    assert up.returncode == 1
    assert up.stderr == (f"Error: telemetry up: FAULTKIT_TELEMETRY_JAEGER names {tmp_path}/no-such-jaeger, "
                         "which does not exist\n")


def test_the_cluster_commands_without_a_cluster_fail_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "FAULTKIT_CLUSTER_STATE": str(tmp_path / "no-cluster")}
    for command in ("up", "status", "down"):
        done = telemetry("cluster", command, env=env)
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            f"Error: telemetry cluster {command}: no cluster: start it with `tools/cluster/cluster up`"]
    exports = telemetry("cluster", "env", env=env)
    assert exports.stdout.splitlines() == [
        "export FAULTKIT_OTLP_ENDPOINT=http://jaeger.telemetry.svc:4318",
        "export FAULTKIT_PROMETHEUS=k8s://telemetry/prometheus:9090",
        "export FAULTKIT_ALERTS=k8s://telemetry/prometheus:9090",
        "export FAULTKIT_JAEGER=k8s://telemetry/jaeger:16686"]


def test_the_cluster_stack_runs_jaeger_yaml_and_names_no_tool_in_what_pods_show(tmp_path: Path) -> None:
    sys.path.insert(0, str(TELEMETRY.parent))
    try:
        from telemetrylib import cluster
    finally:
        sys.path.remove(str(TELEMETRY.parent))
    objs = cluster.manifests("faultkit.local/telemetry-jaeger:1", "faultkit.local/telemetry-prometheus:1")
    assert [o["kind"] for o in objs][0] == "Namespace"
    assert {o["metadata"].get("namespace", o["metadata"]["name"]) for o in objs} == {"telemetry"}
    containers = [c for o in objs if o["kind"] == "Deployment" for c in o["spec"]["template"]["spec"]["containers"]]
    assert {c["imagePullPolicy"] for c in containers} == {"Never"}  # nothing is pulled
    assert "faultkit" not in json.dumps([c["env"] for c in containers]).lower()
    config = next(o for o in objs if o["metadata"]["name"] == "jaeger" and o["kind"] == "ConfigMap")
    text = config["data"]["jaeger.yaml"]
    assert "${env:" not in text and "#" not in text  # values in place, comments gone
    assert "0.0.0.0:4318" in text and "filter/probe" in text
    # an image is the binary and what it loads, named by their content
    binary = tmp_path / "tool"
    binary.write_bytes(b"#!/bin/sh\n")
    tag, files = cluster.image_files("tool", binary)
    assert tag.startswith("faultkit.local/telemetry-tool:") and files == {"tool": binary}  # not ELF: no library
    assert cluster.image_files("tool", binary)[0] == tag
    binary.write_bytes(b"#!/bin/sh\nexit 0\n")
    assert cluster.image_files("tool", binary)[0] != tag
    assert cluster.image_archive(tag, "tool", files)[:100]
