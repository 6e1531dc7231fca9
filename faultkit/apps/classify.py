"""What a setting or a service is to the application model: telemetry, a built-in fault control, a
load generator, or part of the application itself.

One home for these names, used by import (the dependency graph leaves telemetry and fault controls
out), by lint and authoring (such settings are never changed by a config fault) and by candidates.
"""

from __future__ import annotations

import re

# Telemetry settings and the application's own fault controls are left alone: changing them
# either blinds the observer or uses a switch the application built for chaos experiments.
TELEMETRY = re.compile(r"^(OTEL_|JAEGER_|ZIPKIN_)|TRAC(E|ING)|PROFIL|METRICS?_|PROMETHEUS", re.I)
FAULT_CONTROLS = re.compile(r"FLAGD|FEATURE_?FLAG|^FLAG_|CHAOS|FAULT", re.I)

# Services by what they are, matched against a workload's names (Service, workload, Helm component
# label) and its images. Fault controls are the application's own switches for failure (a flag
# service the demo's scenarios flip); telemetry collects traces, metrics and logs about it.
FAULT_CONTROL_SERVICE = re.compile(r"flagd|flipt|unleash|growthbook|launchdarkly|feature-?flags?|featureflag", re.I)
TELEMETRY_SERVICE = re.compile(
    r"jaeger|zipkin|tempo\b|otel-?col|opentelemetry-collector|otelcol|(^|[-/])collector$|prometheus|alertmanager|"
    r"grafana|opensearch|kibana|elasticsearch-exporter|loki|promtail|fluent-?(d|bit)|logstash|vector-agent|"
    r"node-exporter|kube-state-metrics|pyroscope|skywalking|signoz", re.I)
LOAD_SERVICE = re.compile(r"load-?gen|locust|loadtest|traffic-?gen|\bk6\b|(^|[-/])bench", re.I)

ROLES = ("app", "fault-control", "telemetry", "load")


def service_role(names: list[str], images: list[str]) -> str:
    """'fault-control', 'telemetry', 'load' or 'app' for a workload known by these names and images.

    Images count by their repository path only (`ghcr.io/x/demo:1.0-flagd` names the demo, not flagd),
    so a tag never decides."""
    repos = [i.rsplit("@", 1)[0].rpartition(":")[0] if ":" in i.rpartition("/")[2] else i for i in images]
    words = [*names, *repos]
    if any(FAULT_CONTROL_SERVICE.search(w) for w in words):
        return "fault-control"
    if any(TELEMETRY_SERVICE.search(w) for w in words):
        return "telemetry"
    if any(LOAD_SERVICE.search(w) for w in words):
        return "load"
    return "app"
