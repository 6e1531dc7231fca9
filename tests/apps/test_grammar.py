"""One grammar per concept: Kubernetes quantities and network addresses, as lint, import and the
local platform all read them."""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

import pytest

from faultkit.apps import addresses, quantities
from faultkit.apps.importer import hosts_in, resolve
from faultkit.catalog.config_rules import kind_mismatch
from faultkit.errors import InputError
from faultkit.platforms.local.addresses import service_name
from faultkit.platforms.local.deployed import container_of

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "value"),
    [("100m", Decimal("0.1")), ("0.5", Decimal("0.5")), ("1Gi", Decimal(2**30)), ("1e3", Decimal(1000)),
     ("500k", Decimal(500_000)), ("256Mi", Decimal(256 * 2**20)), ("500M", Decimal(500 * 10**6)),
     (".5", Decimal("0.5")), ("2E-3", Decimal("0.002")), ("1E", Decimal(10**18)), ("+3", Decimal(3))],
)
def test_quantities_follow_the_kubernetes_grammar(text: str, value: Decimal) -> None:
    assert quantities.parse(text) == value


@pytest.mark.parametrize("text", ["1K", "lots", "-1", "1.2.3", "Mi", "1mi", "1 Gi", ""])
def test_not_quantities(text: str) -> None:
    with pytest.raises(quantities.QuantityError):
        quantities.parse(text)
    assert not quantities.is_quantity(text)


def test_capital_k_gets_a_hint() -> None:
    with pytest.raises(InputError, match="write k for 1000 or Ki for 1024"):
        quantities.parse("500K")


def test_bytes_and_millicores_round_up_as_kubernetes_does() -> None:
    assert quantities.memory_bytes("100m") == 1  # 0.1 byte rounds up to 1 byte
    assert quantities.memory_bytes("500k") == 500_000
    assert quantities.memory_bytes("1e3") == 1000
    assert quantities.memory_bytes(None) is None and quantities.memory_bytes("") is None
    assert quantities.cpu_millis("0.5") == 500
    assert quantities.cpu_millis("0.1") == 100  # exact, not 99.99...
    assert quantities.cpu_millis("1e3") == 1_000_000
    assert quantities.cpu_millis("0.0001") == 1
    assert quantities.format_bytes(256 * 2**20) == "256Mi" and quantities.format_bytes(1000) == "1000"


def test_lint_refuses_a_memory_limit_that_is_a_unit_mistake_and_accepts_decimal_si() -> None:
    field = "resources.limits.memory"
    problem = kind_mismatch("resource-limit", field, "256Mi", "100m")
    assert problem is not None and "0.1 bytes" in problem and "milli, not mega" in problem
    assert "below 6Mi" in (kind_mismatch("resource-limit", field, "256Mi", "1e3") or "")
    assert kind_mismatch("resource-limit", field, "256Mi", "500k") is not None  # 500 kB is below the floor too
    assert kind_mismatch("resource-limit", field, "256Mi", "64M") is None
    assert kind_mismatch("resource-limit", field, "256Mi", "65536k") is None
    assert kind_mismatch("resource-limit", field, "256Mi", "1Gi") is None
    assert "not a Kubernetes quantity" in (kind_mismatch("resource-limit", field, "256Mi", "64MB") or "")
    cpu = "resources.limits.cpu"
    assert kind_mismatch("resource-limit", cpu, "500m", "0.5") is None
    assert kind_mismatch("resource-limit", cpu, "500m", "20m") is None
    assert "finer than 1m" in (kind_mismatch("resource-limit", cpu, "500m", "0.0005") or "")
    assert "zero" in (kind_mismatch("resource-limit", cpu, "500m", "0") or "")


def test_the_local_platform_runs_what_lint_parses() -> None:
    spec = {"name": "web", "command": ["true"], "resources": {"limits": {"memory": "500k", "cpu": "0.5"}}}
    c = container_of(spec)
    assert (c.memory_limit, c.cpu_limit) == (500_000, 500)
    spec["resources"] = {"limits": {"memory": "100m"}}
    assert container_of(spec).memory_limit == 1
    spec["resources"] = {"limits": {"memory": "1K"}}
    with pytest.raises(InputError, match=r"container 'web': resources.limits: '1K' is not a Kubernetes quantity"):
        container_of(spec)


@pytest.mark.parametrize(
    ("text", "scheme", "userinfo", "host", "port", "rest"),
    [
        ("[::1]:80", "", "", "::1", 80, ""),
        ("http://[fe80::1]:8080/x", "http", "", "fe80::1", 8080, "/x"),
        ("cart:7070", "", "", "cart", 7070, ""),
        ("http://cart/api", "http", "", "cart", None, "/api"),
        ("http://cart:80/api?x=1#f", "http", "", "cart", 80, "/api?x=1#f"),
        ("user:pw@db:5432", "", "user:pw", "db", 5432, ""),
        ("postgres://user:pw@db.shop.svc.cluster.local:5432/orders", "postgres", "user:pw",
         "db.shop.svc.cluster.local", 5432, "/orders"),
        ("jdbc:postgresql://db:5432/orders?ssl=true", "jdbc:postgresql", "", "db", 5432, "/orders?ssl=true"),
        ("jdbc:mysql://ts-order-mysql:3306/ts", "jdbc:mysql", "", "ts-order-mysql", 3306, "/ts"),
        ("redis-cart", "", "", "redis-cart", None, ""),
    ],
)
def test_address_forms(text: str, scheme: str, userinfo: str, host: str, port: int | None, rest: str) -> None:
    a = addresses.parse(text)
    assert a is not None
    assert (a.scheme, a.userinfo, a.host, a.port, a.rest) == (scheme, userinfo, host, port, rest)
    assert a.explicit == bool(scheme or port)


@pytest.mark.parametrize("text", ["/var/lib/data", "hello world", "a:b:c", "http://", ":80", "cart:"])
def test_not_addresses(text: str) -> None:
    assert addresses.parse_with_port(text) is None


def test_rewrites_touch_only_host_or_port() -> None:
    a = addresses.parse("jdbc:postgresql://u:pw@db:5432/orders")
    assert a is not None
    assert a.with_port(5433) == "jdbc:postgresql://u:pw@db:5433/orders"
    assert a.with_host("db-svc") == "jdbc:postgresql://u:pw@db-svc:5432/orders"
    assert a.with_host_port("127.0.0.1", 4000) == "jdbc:postgresql://u:pw@127.0.0.1:4000/orders"
    six = addresses.parse("[::1]:80")
    assert six is not None and six.is_local and six.with_port(81) == "[::1]:81"
    bare = addresses.parse("http://cart/x")
    assert bare is not None and bare.with_port(80) == "http://cart:80/x"


def test_cluster_names_mean_the_same_to_import_and_platform() -> None:
    assert addresses.cluster_name("cart") == ("cart", None)
    assert addresses.cluster_name("cart.shop") == ("cart", "shop")
    assert addresses.cluster_name("cart.shop.svc") == ("cart", "shop")
    assert addresses.cluster_name("Cart.Shop.svc.cluster.local.") == ("cart", "shop")
    assert addresses.cluster_name("api.example.com") is None
    assert addresses.cluster_name("10.0.0.1") is None and addresses.cluster_name("::1") is None
    assert resolve("cart.shop.svc.cluster.local", {"cart"}) == "cart"
    assert resolve("api.example.com", {"api"}) is None
    assert service_name("cart.default.svc.cluster.local") == "cart"
    assert service_name("cart.other") == "cart.other"  # another namespace: not this app's Service


def test_import_reads_every_url_form() -> None:
    assert hosts_in("DB_URL", "jdbc:postgresql://db:5432/orders") == [("db", True)]
    assert hosts_in("DB_URL", "postgres://u:pw@db:5432/orders") == [("db", True)]
    assert hosts_in("PEERS", "a:1,b:2 [::1]:3") == [("a", True), ("b", True), ("::1", True)]
    assert hosts_in("DB_HOST", "db") == [("db", False)]
    assert hosts_in("GREETING", "hello") == []


def test_apps_never_imports_catalog() -> None:
    """Imports run downward: catalog may use the application model, never the other way round."""
    for path in sorted((ROOT / "faultkit" / "apps").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("faultkit.catalog", "faultkit.authoring")), path.name
            if isinstance(node, ast.Import):
                assert not any(n.name.startswith("faultkit.catalog") for n in node.names), path.name


def test_the_local_platform_translates_every_address_form() -> None:
    from faultkit.platforms.local.addresses import translate_value

    def resolve_port(service: str, port: int) -> int | None:
        return {("db", 5432): 40000}.get((service, port)) if service == "db" else None

    def tr(value: str) -> str:
        return translate_value("DB_URL", value, frozenset({8080}), lambda p: 41000, resolve_port)

    assert tr("jdbc:postgresql://u:pw@db:5432/orders") == "jdbc:postgresql://u:pw@127.0.0.1:40000/orders"
    assert tr("[::1]:8080") == "127.0.0.1:41000"
    assert tr("http://nope:80/x") == "http://nope.invalid:80/x"
    assert tr("http://db/x") == "http://db/x"  # no port: nothing to relay
    assert tr("[fe80::1]:80") == "[fe80::1]:80"
