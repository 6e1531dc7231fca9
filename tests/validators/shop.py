"""A running minishop in a throwaway catalog repository, and the faults the validator tests use."""

from __future__ import annotations

import difflib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from faultkit.platforms.local import LocalPlatform
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]


def make_workspace(root: Path) -> Workspace:
    shutil.copytree(
        REPO / "apps" / "minishop",
        root / "apps" / "minishop",
        ignore=shutil.ignore_patterns("__pycache__", ".ruff_cache", ".pytest_cache"),
    )
    for folder in ("catalog/minishop", "patches/minishop"):
        (root / folder).mkdir(parents=True)
    return Workspace(root=root, state_dir=root / ".faultkit")


def env_for(ws: Workspace) -> dict[str, str]:
    return {**os.environ, "FAULTKIT_ROOT": str(ws.root), "FAULTKIT_STATE_DIR": str(ws.state_dir)}


def start(ws: Workspace) -> LocalPlatform:
    platform = LocalPlatform(ws, environ=env_for(ws))
    platform.up("minishop", timeout=120)
    return platform


@contextmanager
def running(root: Path) -> Iterator[tuple[Workspace, LocalPlatform]]:
    """A minishop up in a new catalog repository at `root` for the `with` block, then down."""
    ws = make_workspace(root)
    platform = start(ws)
    try:
        yield ws, platform
    finally:
        platform.down()


def write_patch(ws: Workspace, fault_id: str, rel: str, *replacements: tuple[str, str]) -> str:
    """Make a unified diff of replacements in the app's source, as an author's tool would."""
    path = ws.apps_dir / "minishop" / rel
    before = after = path.read_text()
    for old, new in replacements:
        assert old in after, f"{old!r} not in {rel}"
        after = after.replace(old, new, 1)
    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}"))
    ref = f"patches/minishop/{fault_id}.diff"
    (ws.root / ref).write_text(diff)
    return ref


def base(fault_id: str, service: str, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema": "faultkit/v1",
        "id": fault_id,
        "app": "minishop",
        "title": "Validator test fault",
        "category": "code-bug",
        "level": "service",
        "target": {"service": service, "workload": service, "container": service},
        "scope": [service],
        "artifact": {"kind": "service", "ref": service},
        "probe": {"service": "frontend", "method": "GET", "path": "/cart?user=probe", "expect_status": 200},
        "artifact_check": {"kind": "build", "service": service},
        "effect": "errors",
        "evidence": {"logs": ["x"]},
        "recovery": "Roll back.",
    }
    data.update(fields)
    return data


def config(
    fault_id: str,
    service: str,
    field: str,
    old: str | None,
    new: str | None,
    kind: str,
    message: str,
    log_service: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    fields.setdefault("category", "configuration-bug")
    return base(
        fault_id,
        service,
        mechanism="config",
        config={"workload": service, "container": service, "field": field, "old": old, "new": new, "kind": kind},
        log={"message": message, "service": log_service or service},
        artifact_check={"kind": "setting", "workload": service, "container": service, "field": field, "value": old},
        **fields,
    )


def code(
    ws: Workspace, fault_id: str, service: str, rel: str, old: str, new: str, marker: str, message: str, **fields: Any
) -> dict[str, Any]:
    patch = write_patch(ws, fault_id, rel, (old, new))
    return base(
        fault_id,
        service,
        mechanism="code",
        code={
            "patch": patch,
            "update": "A refactoring",
            "defect": "A wrong assumption",
            "requests": ["POST /checkout"],
            "marker": marker,
        },
        log={"message": message, "service": service},
        artifact={"kind": "source-file", "ref": rel},
        **fields,
    )


def direct(fault_id: str, service: str, action: str, params: dict[str, Any], **fields: Any) -> dict[str, Any]:
    fields.setdefault("category", "infrastructure")
    return base(
        fault_id,
        service,
        mechanism="direct",
        direct={"action": action, "params": params},
        artifact_check={"kind": "action", "service": service},
        **fields,
    )


def save(ws: Workspace, data: dict[str, Any]) -> str:
    scope_of = {
        "cart": ["cart", "checkout", "frontend", "loadgenerator"],
        "cartstore": ["cart", "cartstore", "checkout", "frontend", "loadgenerator"],
        "checkout": ["checkout", "frontend", "loadgenerator"],
        "email": ["checkout", "email", "frontend", "loadgenerator"],
        "frontend": ["frontend", "loadgenerator"],
    }
    data.setdefault("scope", scope_of[data["target"]["service"]])
    data["scope"] = scope_of[data["target"]["service"]]
    (ws.catalog_dir / "minishop" / f"{data['id']}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return data["id"]


# ---- the faults -------------------------------------------------------------------------------

CHECKOUT_PROBE = {
    "service": "frontend",
    "method": "POST",
    "path": "/checkout",
    "expect_status": 200,
    "setup": [
        {"method": "POST", "path": "/cart/add", "body": {"user": "probe", "product_id": "OLJCESPC7Z", "quantity": 1}}
    ],
    "body": {
        "user": "probe",
        "currency": "EUR",
        "email": "probe@example.com",
        "address": {"street_address": "1 Main St", "city": "Springfield", "country": "US", "zip_code": "12345"},
        "card": {"number": "4432-8015-6152-0454", "cvv": "672", "expiration_year": 2039, "expiration_month": 1},
    },
}


def checkout_shipping_field(ws: Workspace) -> str:
    """Admitted code fault: a refactoring reads a field shipping quotes do not have."""
    return save(
        ws,
        code(
            ws,
            "t-checkout-quote-options",
            "checkout",
            "src/checkout/main.py",
            """            "shipping", "SHIPPING_ADDR", "POST", "/quote", {"address": addr, "items": items}
        )["cost"],""",
            """            "shipping", "SHIPPING_ADDR", "POST", "/quote", {"address": addr, "items": items}
        )["options"][0]["price"],""",
            marker='["options"][0]["price"]',
            message="unhandled error: KeyError",
            probe=CHECKOUT_PROBE,
        ),
    )


def from_catalog(ws: Workspace, fault_id: str) -> str:
    """A fault of the shipped catalog (entry and patch), without its recorded verdict."""
    data = yaml.safe_load((REPO / "catalog" / "minishop" / f"{fault_id}.yaml").read_text())
    data.pop("validation", None)
    if data.get("code"):
        (ws.root / data["code"]["patch"]).write_text((REPO / data["code"]["patch"]).read_text())
    (ws.catalog_dir / "minishop" / f"{fault_id}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return fault_id


def shipped_verdict(fault_id: str) -> str:
    """The verdict the shipped catalog records for a fault."""
    data = yaml.safe_load((REPO / "catalog" / "minishop" / f"{fault_id}.yaml").read_text())
    return data["validation"]["verdict"]


def checkout_unconverted_shipping(ws: Workspace) -> str:
    """Rejected code fault: the service's own unit tests catch it."""
    return save(
        ws,
        code(
            ws,
            "t-checkout-shipping-currency",
            "checkout",
            "src/checkout/main.py",
            '    shipping = deps.convert(deps.quote_shipping(req["address"], items), currency)',
            '    shipping = deps.quote_shipping(req["address"], items)  # quoted in the order currency',
            marker="quoted in the order currency",
            message="currency mismatch",
        ),
    )


def cartstore_slow(ws: Workspace) -> str:
    """Requests delayed past the caller's timeout are still failing after the delay is lifted: with
    windows of seconds, their errors outlive the revert and recovery is not observed."""
    return save(
        ws,
        direct(
            "t-cartstore-slow",
            "cartstore",
            "network-delay",
            {"ms": 20000},
            category="database-network",
            log={"message": "cart store request failed", "service": "cart"},
        ),
    )


def cart_store_port(ws: Workspace) -> str:
    return save(
        ws,
        config(
            "t-cart-store-port",
            "cart",
            "env.CARTSTORE_ADDR",
            "cartstore:6379",
            "cartstore:6380",
            "dependency-port",
            "cart store request failed",
            category="dependency",
        ),
    )


def cart_cpu_limit(ws: Workspace) -> str:
    """No observable effect: the lower CPU limit still covers what cart uses under the test load."""
    return save(
        ws,
        config(
            "t-cart-cpu",
            "cart",
            "resources.limits.cpu",
            "500m",
            "400m",
            "resource-limit",
            "throttled",
            category="infrastructure",
        ),
    )


def frontend_frozen(ws: Workspace) -> str:
    """The entry itself stops answering: the application stops serving."""
    return save(
        ws,
        direct("t-frontend-frozen", "frontend", "instance-failure", {}, effect="unavailable"),
    )


def email_port_cleared(ws: Workspace) -> str:
    """The service cannot start without its port: the change breaks startup."""
    return save(ws, config("t-email-port-cleared", "email", "env.PORT", "8025", "", "cleared-value", "PORT is not set"))


def cart_killed(ws: Workspace) -> str:
    """Admitted direct fault whose whole effect comes at once: a kill, and the platform's restart."""
    return save(
        ws,
        direct(
            "t-cart-killed",
            "cart",
            "instance-kill",
            {},
            level="pod",
            effect="restart",
            log={"message": "exited (exit 137)", "service": "cart"},
        ),
    )


def cartstore_frozen(ws: Workspace) -> str:
    """Admitted direct fault: the store stops answering."""
    return save(
        ws,
        direct(
            "t-cartstore-frozen",
            "cartstore",
            "instance-failure",
            {},
            log={"message": "cart store request failed", "service": "cart"},
        ),
    )
