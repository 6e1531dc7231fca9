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
