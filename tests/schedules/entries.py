"""The synthetic entries the schedule tests draw from."""

from __future__ import annotations

from faultkit.schedules import synthetic

SIX = ("code-bug", "dependency", "infrastructure", "deployment", "configuration-bug",
       "database-network")


def shop_entries() -> list[dict]:
    """Two apps: shop (11 services, no authentication faults) and rail (all seven categories)."""
    return synthetic.entries("shop", 11, 80, SIX) + synthetic.entries("rail", 41, 80)
