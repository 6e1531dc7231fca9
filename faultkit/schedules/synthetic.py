"""Synthetic catalog entries for calibration (bench/schedule_bench.py) and tests.

Entries are schema-valid faultkit/v1 data, spread over an app's services the way a real catalog
is: several code faults share a service's build, stress faults share a pod, config faults each
change their own field. Nothing random: the same arguments give the same entries.
"""

from __future__ import annotations

import hashlib
from typing import Any

from faultkit.catalog.vocab import CATEGORY_SHARES

ALL = tuple(CATEGORY_SHARES)


def tuple_without(*left_out: str) -> tuple[str, ...]:
    """Every category but the ones named (an app whose catalog lacks them)."""
    return tuple(c for c in ALL if c not in left_out)


_DIRECT = {"infrastructure": ("cpu-stress", "memory-stress", "instance-kill", "instance-failure"),
           "database-network": ("network-delay", "network-loss")}
_CONFIG = {"dependency": ("dependency-port", "connection-host"),
           "configuration-bug": ("cleared-value", "port-mismatch"),
           "deployment": ("resource-limit",),
           "authentication": ("connection-password",)}


def quota(count: int, categories: tuple[str, ...]) -> dict[str, int]:
    """How many of `count` entries each category gets: shares renormalised, largest remainder."""
    total = sum(CATEGORY_SHARES[c] for c in categories)
    exact = {c: count * CATEGORY_SHARES[c] / total for c in categories}
    out = {c: max(1, int(v)) for c, v in exact.items()}
    for c in sorted(categories, key=lambda c: exact[c] - int(exact[c]), reverse=True):
        if sum(out.values()) >= count:
            break
        out[c] += 1
    return out


def entries(app: str, services: int, count: int,
            categories: tuple[str, ...] = tuple(CATEGORY_SHARES)) -> list[dict[str, Any]]:
    """`count` admitted entries of `app` over `services` services in the given categories."""
    names = [f"svc{i:02d}" for i in range(services)]
    out = []
    n = 0
    for category, k in quota(count, categories).items():
        for j in range(k):
            service = names[(n * 7 + j) % services]
            out.append(_entry(app, f"{app}-{category}-{j:03d}", category, service, j))
            n += 1
    return sorted(out, key=lambda e: e["id"])


def release(version: str, data: list[dict[str, Any]]) -> dict[str, Any]:
    """A minimal faultkit/release/v1 document around some entries (what a schedule reads)."""
    from faultkit.yamlio import canonical_json

    body = {"schema": "faultkit/release/v1", "version": version, "entries": data}
    digest = "sha256:" + hashlib.sha256(canonical_json(body).encode()).hexdigest()
    return {**body, "digest": digest}


def _entry(app: str, fid: str, category: str, service: str, j: int) -> dict[str, Any]:
    base: dict[str, Any] = {
        "schema": "faultkit/v1", "id": fid, "app": app, "title": f"{category} in {service}",
        "category": category, "level": "service", "target": {"service": service},
        "scope": [service], "probe": {"service": service, "path": "/"},
        "effect": "errors", "evidence": {}, "recovery": "revert the change",
        "validation": {"verdict": "admitted", "bundle_digest": "sha256:" + "0" * 64,
                       "at": "2025-01-01T00:00:00Z", "platform": "local"},
    }
    log = {"message": f"{fid} failed", "service": service}
    if category == "code-bug":
        base.update(mechanism="code", artifact={"kind": "source-file", "ref": f"src/{service}/main.py"},
                    artifact_check={"kind": "build", "service": service}, log=log,
                    code={"patch": f"patches/{app}/{fid}.diff", "update": "a refactoring",
                          "defect": "a wrong assumption", "requests": ["GET /"], "marker": fid})
    elif category in _DIRECT:
        action = _DIRECT[category][j % len(_DIRECT[category])]
        level = "service" if category == "database-network" else ("pod", "node")[j % 2]
        base.update(mechanism="direct", level=level, direct={"action": action},
                    artifact={"kind": "service", "ref": service},
                    artifact_check={"kind": "action", "service": service})
    else:
        kind = _CONFIG[category][j % len(_CONFIG[category])]
        field = f"env.{category.upper().replace('-', '_')}_{j:03d}"
        base.update(mechanism="config", artifact={"kind": "manifest-field", "ref": field},
                    artifact_check={"kind": "setting", "workload": service, "field": field},
                    log=log, config={"workload": service, "container": service, "field": field,
                                     "old": "1", "new": "2", "kind": kind})
    return base
