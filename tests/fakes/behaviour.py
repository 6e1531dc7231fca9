"""The fake platform's behaviour table: what a fault does to the application, said by the test.

The fake carries changes out (settings, builds, actions) but gives them no effect of its own; a
test lists the effects it needs, each as a trigger and what the service then does:

    Behaviour(Setting("cart", "cart", "env.CARTSTORE_ADDR"), "cart", errors=1.0, log="cart store request failed")
    Behaviour(BuildHas("checkout", '["options"]'), "checkout", errors=0.5, log="KeyError")
    Behaviour(ActionOn("instance-failure", "cartstore"), "cartstore", unready=True)
    Behaviour(Setting("cart", "cart", "env.CARTSTORE_ADDR"), "frontend", errors=1.0, path="/cart")

A Setting triggers while the deployed value differs from the app's manifest; BuildHas while an
instance of the service runs a build whose files contain the text; ActionOn while such an action
is in force. With `path`, the share of errors is of real requests to that path only (the
load generator's simulated traffic is not on a path). Nothing else has an effect: no hidden magic.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Setting:
    workload: str
    container: str
    path: str


@dataclass(frozen=True)
class BuildHas:
    service: str
    text: str


@dataclass(frozen=True)
class ActionOn:
    action: str
    service: str


Trigger = Setting | BuildHas | ActionOn
TRIGGERS: dict[str, type[Setting] | type[BuildHas] | type[ActionOn]] = {
    "setting": Setting, "build": BuildHas, "action": ActionOn}


@dataclass(frozen=True)
class Behaviour:
    when: Trigger
    service: str  # the service that shows the effect
    errors: float = 0.0  # share of its requests answered 500, 0..1
    log: str | None = None  # an ERROR line its instances log while the effect lasts
    restarts: bool = False  # its instances restart once as the effect begins
    unready: bool = False  # its instances fail readiness while the effect lasts
    path: str | None = None  # `errors` only for real requests to paths under this one (a probe's page)

    def __post_init__(self) -> None:
        if not 0.0 <= self.errors <= 1.0:
            raise ValueError(f"behaviour on {self.service}: errors {self.errors} is not a share between 0 and 1")

    def key(self) -> str:
        return f"{type(self.when).__name__}:{sorted(asdict(self.when).items())}->{self.service}"

    def to_json(self) -> dict[str, Any]:
        kind = next(k for k, t in TRIGGERS.items() if isinstance(self.when, t))
        return {**asdict(self), "when": {"kind": kind, **asdict(self.when)}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Behaviour:
        when = dict(data["when"])
        trigger = TRIGGERS[when.pop("kind")](**when)
        return cls(trigger, data["service"], float(data["errors"]), data.get("log"), bool(data["restarts"]),
                   bool(data["unready"]), data.get("path"))
