"""The fixed vocabularies of the catalog: categories with their production shares, config kinds,
direct actions. The JSON Schema repeats the names; a test keeps the two in step."""

from __future__ import annotations

from dataclasses import dataclass

# Production shares of the seven categories (SPEC.md section 1); schedules draw with them.
CATEGORY_SHARES: dict[str, float] = {
    "code-bug": 0.270,
    "dependency": 0.164,
    "infrastructure": 0.158,
    "deployment": 0.132,
    "configuration-bug": 0.125,
    "database-network": 0.105,
    "authentication": 0.046,
}
CATEGORIES = tuple(CATEGORY_SHARES)
MECHANISMS = ("code", "config", "direct")
LEVELS = ("service", "pod", "node")

# What a config fault may change, written directly in a manifest (SPEC.md section 2).
CONFIG_KINDS = (
    "dependency-port",
    "resource-limit",
    "connection-host",
    "connection-password",
    "port-mismatch",
    "cleared-value",
)

# The declared effect of a fault; the validator checks that what it observes matches.
EFFECTS = ("errors", "error-logs", "restart", "oom-restart", "unavailable")


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    default: object
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class Action:
    name: str
    category: str
    levels: tuple[str, ...]
    platforms: tuple[str, ...]
    params: tuple[Param, ...]
    summary: str


ACTIONS: dict[str, Action] = {
    a.name: a
    for a in (
        Action("cpu-stress", "infrastructure", ("pod", "service", "node"), ("local", "kubernetes"),
               (Param("workers", int, 2, 1, 64),), "busy-loop workers competing for the target's CPU"),
        Action("memory-stress", "infrastructure", ("pod", "service", "node"), ("local", "kubernetes"),
               (Param("mb", int, 256, 1, 65536),), "memory allocated inside the target's limit"),
        Action("instance-kill", "infrastructure", ("pod", "service"), ("local", "kubernetes"),
               (), "one instance killed; the platform restarts it"),
        Action("instance-failure", "infrastructure", ("pod", "service"), ("local", "kubernetes"),
               (), "one instance stops answering for the duration"),
        Action("network-delay", "database-network", ("pod", "service"), ("local", "kubernetes"),
               (Param("ms", int, 2000, 1, 60000),), "delay added to traffic to the target"),
        Action("network-loss", "database-network", ("pod", "service"), ("local", "kubernetes"),
               (Param("percent", int, 50, 1, 100),), "share of connections to the target dropped"),
        Action("dns-error", "database-network", ("pod", "service"), ("kubernetes",),
               (), "name resolution for the target fails"),
        Action("disk-fill", "infrastructure", ("pod", "node"), ("kubernetes",),
               (Param("percent", int, 95, 1, 100),), "the target's filesystem filled"),
        Action("io-delay", "infrastructure", ("pod", "node"), ("kubernetes",),
               (Param("ms", int, 500, 1, 60000),), "delay added to the target's file I/O"),
    )
}
