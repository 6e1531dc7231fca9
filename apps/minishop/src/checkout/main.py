"""checkout: turns a user's cart into a paid, shipped and confirmed order."""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from shoplib import App, HTTPError, Request, call

SERVICE = "checkout"
Money = dict[str, Any]  # {"currency_code": str, "amount_cents": int}
Items = list[dict[str, Any]]


@dataclass
class Deps:
    """Everything checkout needs from other services; fakes are passed in tests."""

    get_cart: Callable[[str], Items]
    get_price: Callable[[str], Money]
    convert: Callable[[Money, str], Money]
    quote_shipping: Callable[[dict[str, Any], Items], Money]
    charge: Callable[[Money, dict[str, Any]], str]
    ship: Callable[[dict[str, Any], Items], str]
    send_email: Callable[[str, dict[str, Any]], None]
    empty_cart: Callable[[str], None]


def remote_deps() -> Deps:
    return Deps(
        get_cart=lambda user: call("cart", "CART_ADDR", "GET", f"/cart/{quote(user)}")["items"],
        get_price=lambda pid: call(
            "productcatalog", "PRODUCTCATALOG_ADDR", "GET", f"/products/{quote(pid)}")["price"],
        convert=lambda money, to: call(
            "currency", "CURRENCY_ADDR", "POST", "/convert", {"from": money, "to_code": to}),
        quote_shipping=lambda addr, items: call(
            "shipping", "SHIPPING_ADDR", "POST", "/quote", {"address": addr, "items": items}
        )["cost"],
        charge=lambda amount, card: call(
            "payment", "PAYMENT_ADDR", "POST", "/charge", {"amount": amount, "card": card}
        )["transaction_id"],
        ship=lambda addr, items: call(
            "shipping", "SHIPPING_ADDR", "POST", "/ship", {"address": addr, "items": items}
        )["tracking_id"],
        send_email=lambda email, order: call(
            "email", "EMAIL_ADDR", "POST", "/send_confirmation", {"email": email, "order": order}),
        empty_cart=lambda user: call("cart", "CART_ADDR", "DELETE", f"/cart/{quote(user)}"),
    )


def parse_request(body: dict[str, Any]) -> dict[str, Any]:
    for field, kind in (("user", str), ("currency", str), ("email", str),
                        ("address", dict), ("card", dict)):
        if not isinstance(body.get(field), kind) or not body[field]:
            raise HTTPError(400, f"field {field!r} is required")
    return {**body, "currency": body["currency"].upper()}


def add_money(a: Money, b: Money) -> Money:
    if a["currency_code"] != b["currency_code"]:
        raise ValueError(f"currency mismatch {a['currency_code']} vs {b['currency_code']}")
    return {"currency_code": a["currency_code"],
            "amount_cents": a["amount_cents"] + b["amount_cents"]}


def compute_total(lines: list[tuple[Money, int]], shipping: Money, currency: str) -> Money:
    """Sum unit prices times quantities plus shipping; all already in `currency`."""
    total: Money = {"currency_code": currency, "amount_cents": 0}
    for unit, qty in lines:
        total = add_money(total, {"currency_code": unit["currency_code"],
                                  "amount_cents": unit["amount_cents"] * qty})
    return add_money(total, shipping)


def place_order(req: dict[str, Any], deps: Deps, new_id: Callable[[], str]) -> dict[str, Any]:
    items = deps.get_cart(req["user"])
    if not items:
        raise HTTPError(400, "cart is empty")
    currency = req["currency"]
    lines = [(deps.convert(deps.get_price(i["product_id"]), currency), i["quantity"])
             for i in items]
    shipping = deps.convert(deps.quote_shipping(req["address"], items), currency)
    total = compute_total(lines, shipping, currency)
    # Charge before shipping: nothing leaves the warehouse unpaid.
    transaction_id = deps.charge(total, req["card"])
    tracking_id = deps.ship(req["address"], items)
    order = {"order_id": new_id(), "total": total, "shipping_cost": shipping,
             "tracking_id": tracking_id, "transaction_id": transaction_id, "items": items}
    deps.send_email(req["email"], order)
    deps.empty_cart(req["user"])
    return order


def build_app(deps_factory: Callable[[], Deps] = remote_deps) -> App:
    app = App(SERVICE)

    @app.route("POST", "/checkout")
    def checkout(req: Request) -> Any:
        order = place_order(parse_request(req.json()), deps_factory(),
                            lambda: str(uuid.uuid4()))
        app.log.info("order placed", order_id=order["order_id"],
                     amount_cents=order["total"]["amount_cents"],
                     currency_code=order["total"]["currency_code"])
        return order

    return app


def main() -> None:
    build_app().run()


if __name__ == "__main__":
    main()
