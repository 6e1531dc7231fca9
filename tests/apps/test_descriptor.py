"""Application descriptors and the affected scope through dependency edges."""

from __future__ import annotations

import json

import pytest

from faultkit.apps.descriptor import load_app
from faultkit.errors import InputError


def test_scope_is_service_plus_everything_that_reaches_it(ws):
    app = load_app(ws, "minishop")
    assert app.scope("cartstore") == ("cart", "cartstore", "checkout", "frontend", "loadgenerator")
    assert app.scope("frontend") == ("frontend", "loadgenerator")


def test_unknown_service_suggests(ws):
    with pytest.raises(InputError, match="did you mean 'checkout'"):
        load_app(ws, "minishop").scope("chekout")


def test_unknown_app_lists_known(ws, cli):
    proc = cli("apps", "show", "minishp", check=1)
    assert "did you mean 'minishop'" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_scope_list_show(ws, cli):
    assert cli("apps", "scope", "minishop", "payment", check=0).stdout.split() == [
        "checkout", "frontend", "loadgenerator", "payment"]
    assert json.loads(cli("apps", "list", "--json", check=0).stdout)[0]["name"] == "minishop"
    shown = json.loads(cli("apps", "show", "minishop", "--json", check=0).stdout)
    assert {s["name"] for s in shown["services"]} >= {"frontend", "cart", "cartstore", "checkout"}


def test_descriptor_edge_to_unknown_service_is_located(ws):
    path = ws.apps_dir / "minishop" / "app.yaml"
    path.write_text(path.read_text().replace("[cart, cartstore]", "[cart, redis]"))
    with pytest.raises(InputError, match=r"app.yaml:\d+: edges\[6\]: 'redis' is not a service"):
        load_app(ws, "minishop")


def test_a_services_own_build_commands_replace_the_apps(ws):
    path = ws.apps_dir / "minishop" / "app.yaml"
    text = path.read_text()
    text = text.replace("aliases: [paymentservice]}",
                        "aliases: [paymentservice], build: {test: [mvn, -q, test]}}")
    text = text.replace("aliases: [emailservice]}", "aliases: [emailservice], build: {lint: [], test: []}}")
    path.write_text(text)
    app = load_app(ws, "minishop")
    lint = ("python3", "-m", "ruff", "check", "--quiet", "--no-cache", ".")
    assert app.checks("payment") == (lint, ("mvn", "-q", "test"))  # its test; the app's lint
    assert app.checks("email") == ((), ())  # [] says it has none
    assert app.checks("cart") == (lint, ("python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"))


def test_a_services_build_with_an_unknown_key_is_located(ws):
    path = ws.apps_dir / "minishop" / "app.yaml"
    text = path.read_text().replace("aliases: [emailservice]}", "aliases: [emailservice], build: {tests: []}}")
    path.write_text(text)
    with pytest.raises(InputError, match=r"app.yaml:\d+: .*tests"):
        load_app(ws, "minishop")
