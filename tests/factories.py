"""Entries for tests: a valid minishop config entry, and writing one into a workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from faultkit.workspace import Workspace


def entry_data(**overrides: Any) -> dict[str, Any]:
    """A valid config entry for minishop; keyword arguments replace top-level fields."""
    data: dict[str, Any] = {
        "schema": "faultkit/v1",
        "id": "ms-cart-store-port",
        "app": "minishop",
        "title": "Cart store address port changed",
        "mechanism": "config",
        "category": "dependency",
        "level": "service",
        "target": {"service": "cart", "workload": "cart", "container": "cart"},
        "scope": ["cart", "checkout", "frontend"],
        "artifact": {
            "kind": "manifest-field",
            "ref": "Deployment/cart/cart/env.CARTSTORE_ADDR",
            "aliases": ["CARTSTORE_ADDR", "cart"],
        },
        "probe": {"service": "frontend", "method": "GET", "path": "/cart?user=probe", "expect_status": 200},
        "artifact_check": {
            "kind": "setting",
            "workload": "cart",
            "container": "cart",
            "field": "env.CARTSTORE_ADDR",
            "value": "cartstore:6379",
        },
        "config": {
            "workload": "cart",
            "container": "cart",
            "field": "env.CARTSTORE_ADDR",
            "old": "cartstore:6379",
            "new": "cartstore:6380",
            "kind": "dependency-port",
        },
        "log": {"message": "cart store request failed", "service": "cart"},
        "effect": "errors",
        "evidence": {
            "metrics": ["http_requests_total{service=cart,status=500}"],
            "logs": ["cart store request failed"],
        },
        "recovery": "Restore CARTSTORE_ADDR of the cart deployment to cartstore:6379 and roll it out.",
    }
    data.update(overrides)
    return data


def write_entry(ws: Workspace, data: dict[str, Any], name: str | None = None) -> Path:
    path = ws.catalog_dir / data.get("app", "minishop") / (name or f"{data['id']}.yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def port_entry(i: int, **over: Any) -> dict[str, Any]:
    """Distinct valid config entries: each changes the cart store port to another value."""
    return entry_data(
        id=f"ms-cart-port-{i}",
        config={"workload": "cart", "container": "cart", "field": "env.CARTSTORE_ADDR", "old": "cartstore:6379",
                "new": f"cartstore:{6390 + i}", "kind": "dependency-port"},
        **over,
    )


def cart_prefix_entry(**over: Any) -> dict[str, Any]:
    """A valid code entry for patches/minishop/ms-cart-prefix.diff (the caller writes the patch)."""
    data = entry_data(
        id="ms-cart-prefix",
        mechanism="code",
        category="code-bug",
        artifact={"kind": "source-file", "ref": "src/cart/main.py", "aliases": ["main.py"]},
        artifact_check={"kind": "build", "service": "cart", "absent_marker": "cart-v2:"},
        code={"patch": "patches/minishop/ms-cart-prefix.diff", "update": "prefix cart keys",
              "defect": "old keys are not migrated", "requests": ["GET /cart"], "marker": "cart-v2:"},
        **over,
    )
    del data["config"]
    return data
