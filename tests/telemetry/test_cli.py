"""`telemetry` refusals that start nothing: they run in the fast tier."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.telemetry.conftest import stack_env, telemetry


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
