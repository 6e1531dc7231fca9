"""Traces read for one instance on a shared stack (issue 31): two instances of the same services send
to one real Jaeger, told apart only by their resource attribute k8s.namespace.name, as the kubernetes
platform sets it on every pod; a read scoped to one returns that instance's traces alone."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from faultkit.observe.jaeger import read_spans
from tests.helpers.waiting import wait_until
from tests.telemetry.conftest import REPO, Stack

pytestmark = pytest.mark.live


def send(stack: Stack, namespace: str, ok: int, errors: int) -> list[str]:
    """Trace ids of the requests one instance's front handled (its probes' are dropped by the collector)."""
    env = dict(stack.env, OTEL_EXPORTER_OTLP_ENDPOINT=stack.exports["OTEL_EXPORTER_OTLP_ENDPOINT"],
               OTEL_RESOURCE_ATTRIBUTES=f"k8s.namespace.name={namespace}")
    run = subprocess.run([sys.executable, "-m", "tests.telemetry.services", "--ok", str(ok), "--errors", str(errors),
                          "--probes", "0"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    made = json.loads(run.stdout)
    return sorted(made["ok"] + made["errors"])


def test_a_scoped_read_returns_the_instance_traces_only(telemetry_stack: Stack) -> None:
    start = time.time() - 1
    one, two = send(telemetry_stack, "shop-1", ok=2, errors=1), send(telemetry_stack, "shop-2", ok=3, errors=0)

    def traces(scope: dict[str, str] | None) -> list[str]:
        return sorted({s.trace_id for s in read_spans(telemetry_stack.jaeger, ["front", "back"], start, time.time() + 1,
                                                      scope)})

    wait_until(lambda: traces(None) == sorted(one + two), 30, "both instances' traces in Jaeger")
    assert traces({"k8s.namespace.name": "shop-1"}) == one
    assert traces({"k8s.namespace.name": "shop-2"}) == two
    assert traces({"k8s.namespace.name": "shop-3"}) == []
    spans = read_spans(telemetry_stack.jaeger, ["front"], start, time.time() + 1, {"k8s.namespace.name": "shop-1"})
    assert {s.service for s in spans} == {"front", "back"}  # a scoped trace is still read whole
