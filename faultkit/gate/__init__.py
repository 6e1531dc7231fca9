"""The CI gate for catalog pull requests: lint (and optionally validate) only what changed."""

from faultkit.gate.core import Case, GateResult, run_gate

__all__ = ["Case", "GateResult", "run_gate"]
