"""The knobs of one validation run: window length, sampling interval, injections, rollout timeout,
the Jaeger each window's spans are read from and the Prometheus its alerts are read from."""

from __future__ import annotations

from dataclasses import dataclass, field

from faultkit.errors import UsageError
from faultkit.observe import alerts as alert_source
from faultkit.observe.jaeger import check_url
from faultkit.observe.load import Limits
from faultkit.validators.screening import RULES_VERSION, SUPPORTED_VERSIONS


@dataclass(frozen=True)
class ValidationParams:
    window_s: float = 300.0
    interval_s: float = 2.0
    repeat: int = 2
    rollout_timeout_s: float = 60.0
    limits: Limits = field(default_factory=Limits)  # a cycle past them observed the machine: retried, not judged
    rules: int = RULES_VERSION  # the screening rules it is judged by (v3: the probe on its own clock)
    jaeger: str = ""  # Jaeger's query URL ("": the descriptor's signals.traces.jaeger, if any)
    alerts: str = ""  # the Prometheus that evaluates the app's alert pack ("": windows record no alerts)
    alert_raised: bool = False  # alert-raised decides admission (faultkit.toml [validate] alert_raised)

    def check(self) -> None:
        if self.window_s < self.interval_s:
            raise UsageError(
                f"--window {self.window_s:g}s is shorter than the sampling interval "
                f"({self.interval_s:g}s); use a window of at least {self.interval_s:g}s"
            )
        if self.rules not in SUPPORTED_VERSIONS:
            raise UsageError(f"--rules {self.rules}: this faultkit has rules {', '.join(map(str, SUPPORTED_VERSIONS))}")
        if self.repeat < 1:
            raise UsageError(f"--repeat {self.repeat}: at least one injection is needed")
        if self.jaeger:
            check_url(self.jaeger, in_cluster=True)
        if self.alerts:
            alert_source.check_url(self.alerts, in_cluster=True)
        elif self.alert_raised:
            raise UsageError("faultkit.toml asks alert-raised to decide admission ([validate] alert_raised = true): "
                             "give --alerts URL of a Prometheus that evaluates the app's alert pack")
