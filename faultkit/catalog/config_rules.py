"""Which manifest settings a config fault may change (SPEC.md section 2), with the reason for each
refusal. Shared by lint and by `faultkit author config`."""

from __future__ import annotations

import re
from typing import Any

from faultkit.apps import addresses, quantities
from faultkit.apps.classify import FAULT_CONTROLS, TELEMETRY
from faultkit.apps.manifests import step

SECRET_NAME = re.compile(r"SECRET|TOKEN|PRIVATE_KEY|API_KEY|CERT", re.I)
PASSWORD = re.compile(r"PASS(WORD)?|CREDENTIAL|AUTH", re.I)


def refusal(spec: dict[str, Any], field: str) -> str | None:
    """Why `field` of this container spec may not be changed by a config fault, or None."""
    head, *rest = field.split(".")
    if head == "envFrom":
        return ("envFrom loads configuration indirectly (ConfigMap/Secret); "
                "only settings written in the manifest may change")
    if head in ("volumeMounts", "volumes"):
        return "mounted files are indirectly loaded configuration; only settings written in the manifest may change"
    if head == "env" and rest:
        name = rest[0]
        item = step(spec.get("env") or [], name)
        if isinstance(item, dict) and "valueFrom" in item:
            source = next(iter(item["valueFrom"]), "a reference")
            return f"env {name} is loaded from {source}; only values written directly in the manifest may change"
        if TELEMETRY.search(name):
            return f"env {name} is a telemetry setting; faults must not blind the observer"
        if FAULT_CONTROLS.search(name):
            return f"env {name} is one of the application's built-in fault controls (feature flags); left alone"
        if SECRET_NAME.search(name) and not PASSWORD.search(name):
            return f"env {name} holds a secret; secrets are left alone"
    if head not in ("env", "resources", "ports", "args", "command", "image", "readinessProbe", "livenessProbe"):
        return f"{head} is not a setting a config fault changes (env, resources, ports, args, probes)"
    return None


def kind_mismatch(kind: str, field: str, old: str | None, new: str | None) -> str | None:
    """Why the declared kind does not describe this change, or None when it does."""
    head = field.split(".")[0]
    name = field.split(".")[1] if head == "env" and "." in field else ""
    if kind == "cleared-value":
        return None if new in (None, "") else "a cleared-value change sets the value to empty (new: '' or null)"
    if kind == "resource-limit":
        if not field.startswith("resources.limits."):
            return "a resource-limit change is to resources.limits.<cpu|memory>"
        return _limit_problem(field.rsplit(".", 1)[1], new)
    if kind == "connection-password":
        return (
            None
            if head == "env" and PASSWORD.search(name)
            else "a connection-password change is to an env var holding a password"
        )
    if kind in ("dependency-port", "connection-host"):
        o, n = addresses.parse_with_port(old or ""), addresses.parse_with_port(new or "")
        if head != "env" or not o or not n:
            return f"a {kind} change rewrites an env value of the form host:port or a URL"
        same_host, same_port = o.host == n.host, o.port == n.port
        if kind == "dependency-port" and not (same_host and not same_port):
            return "a dependency-port change keeps the host and changes the port"
        if kind == "connection-host" and same_host:
            return "a connection-host change changes the host"
        return None
    if kind == "port-mismatch":
        if field.endswith(("containerPort", "targetPort", ".port")) or (head == "env" and name.endswith("PORT")):
            return None if (new or "").isdigit() else f"{new!r} is not a port number"
        return "a port-mismatch change is to a listener port (env *PORT, containerPort, targetPort)"
    return f"unknown kind {kind!r}"


def _limit_problem(resource: str, new: str | None) -> str | None:
    """Why `new` is not a limit Kubernetes would run as meant: not a quantity, or a unit mistake."""
    if not new:
        return "a resource-limit change sets a quantity such as 64Mi or 250m"
    try:
        if resource == "memory":
            return quantities.memory_problem(new)
        if resource == "cpu":
            return quantities.cpu_problem(new)
        quantities.parse(new)
    except quantities.QuantityError as e:
        return str(e)
    return None


def below_request(container: dict[str, Any], field: str, new: str | None) -> str | None:
    """Why the API server would refuse a resource limit: it is below the container's request of the
    same resource (Bank of Anthos' userservice requests 260m of CPU, so a limit of 50m is invalid)."""
    if not field.startswith("resources.limits.") or not new:
        return None
    resource = field.rsplit(".", 1)[1]
    request = ((container.get("resources") or {}).get("requests") or {}).get(resource)
    try:
        if request is not None and quantities.parse(new) < quantities.parse(request):
            return f"{new} is below the container's request of {request}, which the API server refuses"
    except quantities.QuantityError:
        return None
    return None
