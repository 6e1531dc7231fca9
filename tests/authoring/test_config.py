"""`faultkit author config`: settings written directly in a manifest, and every refusal."""

from __future__ import annotations

import json

import pytest
import yaml

from faultkit.catalog.lint import lint
from faultkit.workspace import Workspace

EXTRA_ENV = """\
          envFrom:
            - configMapRef:
                name: cart-settings
          volumeMounts:
            - name: settings
              mountPath: /etc/cart
"""
SECRET = """---
apiVersion: v1
kind: Secret
metadata:
  name: cart-auth
stringData:
  password: hunter2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cart-settings
data:
  MODE: normal
"""


@pytest.fixture
def cart_manifest(ws: Workspace) -> None:
    """minishop's cart manifest with the indirect configuration real apps carry."""
    path = ws.apps_dir / "minishop" / "manifests" / "cart.yaml"
    text = path.read_text()
    env_anchor = "          env:\n"
    text = text.replace(env_anchor, EXTRA_ENV + env_anchor + (
        "            - name: STORE_TOKEN\n              valueFrom:\n                secretKeyRef:\n"
        "                  name: cart-auth\n                  key: password\n"
        "            - name: FLAGD_HOST\n              value: \"flagd\"\n"), 1)
    path.write_text(text + SECRET)


def _config(fk, *extra: str):
    return fk("author", "config", "--app", "minishop", *extra)


def test_dependency_port_entry_is_written_and_lints_after_log_filled(ws: Workspace, fk) -> None:
    r = _config(fk, "--workload", "cart", "--field", "env.CARTSTORE_ADDR", "--value", "cartstore:6380",
                "--kind", "dependency-port", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    data = out["entry"]
    assert out["path"] == "catalog/minishop/minishop-cart-env-cartstore-addr-1.yaml"
    assert data["config"] == {"workload": "cart", "container": "cart", "field": "env.CARTSTORE_ADDR",
                              "old": "cartstore:6379", "new": "cartstore:6380", "kind": "dependency-port"}
    assert data["category"] == "database-network"  # cartstore is a datastore
    assert data["effect"] == "errors" and data["level"] == "service"
    assert data["artifact_check"]["value"] == "cartstore:6379"
    assert out["todo"] == ["log.message"]
    path = ws.root / out["path"]
    assert [f.path for f in lint(ws, [path]).findings] == ["log.message"]
    body = yaml.safe_load(path.read_text())
    body["log"]["message"] = "cart store request failed"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    assert lint(ws, [path]).errors == 0
    again = _config(fk, "--workload", "cart", "--field", "env.CARTSTORE_ADDR", "--value", "cartstore:6380",
                    "--kind", "dependency-port")
    assert again.code == 1 and "already makes this change" in again.err


@pytest.mark.parametrize("args, why", [
    (["--workload", "cart", "--field", "envFrom"], "envFrom loads configuration indirectly"),
    (["--workload", "cart", "--field", "env.STORE_TOKEN"], "is loaded from secretKeyRef"),
    (["--workload", "cart", "--field", "env.OTEL_SERVICE_NAME"], "telemetry setting"),
    (["--workload", "cart", "--field", "env.FLAGD_HOST"], "built-in fault controls"),
    (["--workload", "cart", "--field", "volumeMounts.settings.mountPath"], "mounted files"),
    (["--workload", "Secret/cart-auth", "--field", "stringData.password"], "secrets are left alone"),
    (["--workload", "cart-auth", "--field", "stringData.password"], "secrets are left alone"),
    (["--workload", "ConfigMap/cart-settings", "--field", "data.MODE"], "indirectly loaded configuration"),
    (["--workload", "cart", "--field", "env.NOT_THERE"], "is not written in the manifest"),
    (["--workload", "cart", "--field", "metadata.labels.app"], "not a setting a config fault changes"),
])
def test_refusals_say_why(ws: Workspace, fk, cart_manifest, args: list[str], why: str) -> None:
    r = _config(fk, *args, "--value", "x:1", "--kind", "dependency-port")
    assert r.code == 1 and why in r.err, r.err
    assert not list((ws.catalog_dir / "minishop").iterdir())


def test_kind_and_value_refusals(ws: Workspace, fk) -> None:
    r = _config(fk, "--workload", "cart", "--field", "env.CARTSTORE_ADDR", "--value", "other:6379",
                "--kind", "dependency-port")
    assert r.code == 1 and "keeps the host and changes the port" in r.err
    r = _config(fk, "--workload", "cart", "--field", "resources.limits.memory", "--value", "lots",
                "--kind", "resource-limit")
    assert r.code == 1 and "not a Kubernetes quantity" in r.err
    r = _config(fk, "--workload", "cart", "--field", "env.CARTSTORE_ADDR", "--value", "cartstore-chaos:6379",
                "--kind", "connection-host")
    assert r.code == 1 and "chaos" in r.err and "ordinary release" in r.err
    r = _config(fk, "--workload", "cart", "--field", "env.CARTSTORE_ADDR", "--value", "cartstore:6379",
                "--kind", "dependency-port")
    assert r.code == 1


def test_defaults_by_kind_and_dry_run(ws: Workspace, fk) -> None:
    r = _config(fk, "--workload", "cart", "--field", "env.CARTSTORE_PASSWORD", "--value", "9f2c77aa01",
                "--kind", "connection-password", "--dry-run")
    assert r.code == 0 and yaml.safe_load(r.out)["category"] == "authentication"
    assert not list((ws.catalog_dir / "minishop").iterdir())
    cases = [
        (["--workload", "frontend", "--field", "env.CART_ADDR", "--value", "cart:7071", "--kind", "dependency-port"],
         "dependency", "errors"),
        (["--workload", "cart", "--field", "resources.limits.memory", "--value", "64Mi", "--kind", "resource-limit"],
         "deployment", "oom-restart"),
        (["--workload", "Service/cart", "--field", "ports.http.targetPort", "--value", "7071",
          "--kind", "port-mismatch"], "configuration-bug", "errors"),
        (["--workload", "frontend", "--field", "env.CART_ADDR", "--kind", "cleared-value"],
         "configuration-bug", "TODO: one of errors, error-logs, restart, oom-restart, unavailable"),
    ]
    for args, category, effect in cases:
        r = _config(fk, *args, "--dry-run")
        assert r.code == 0, r.err
        data = yaml.safe_load(r.out)
        assert (data["category"], data["effect"]) == (category, effect)
    port = yaml.safe_load(_config(fk, *cases[2][0], "--dry-run").out)
    assert port["target"]["service"] == "cart" and port["log"]["service"] == "frontend"  # callers see it
    assert port["config"]["container"] == ""
    r = _config(fk, *cases[0][0], "--category", "database-network", "--id", "minishop-cart-addr", "--dry-run")
    assert yaml.safe_load(r.out)["category"] == "database-network"


def test_lint_flags_a_leaky_value_written_by_hand(ws: Workspace) -> None:
    from tests.factories import entry_data, write_entry

    data = entry_data()
    data["config"] = dict(data["config"], new="cartstore-broken:6379", kind="connection-host")
    path = write_entry(ws, data)
    leaks = [f for f in lint(ws, [path]).findings if f.rule == "leakage"]
    assert [f.path for f in leaks] == ["config.new"] and "'broken'" in leaks[0].message
