"""frontend: the shop's public JSON API, composing all backend services."""

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

from shoplib import App, DependencyError, HTTPError, Request, call

SERVICE = "frontend"
DEFAULT_CURRENCY = "USD"
_CURRENCY_RE = re.compile(r"^[A-Z]{3}$")

# Backend access goes through this function so tests can substitute it.
Caller = Callable[..., Any]


def parse_currency(req: Request) -> str:
    code = req.query.get("currency", DEFAULT_CURRENCY).upper()
    if not _CURRENCY_RE.match(code):
        raise HTTPError(400, "currency must be a 3-letter code")
    return code


def require_user(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise HTTPError(400, "user is required")
    return value


def line_total(unit: dict[str, Any], quantity: int) -> dict[str, Any]:
    return {"currency_code": unit["currency_code"], "amount_cents": unit["amount_cents"] * quantity}


class Shop:
    """Backend calls; one instance per app, addresses resolved by `call` at use."""

    def __init__(self, caller: Caller = call) -> None:
        self.call = caller

    def products(self) -> list[dict[str, Any]]:
        return self.call("productcatalog", "PRODUCTCATALOG_ADDR", "GET", "/products")["products"]

    def product(self, pid: str) -> dict[str, Any]:
        return self.call("productcatalog", "PRODUCTCATALOG_ADDR", "GET",
                         f"/products/{quote(pid)}")

    def convert(self, money: dict[str, Any], to: str) -> dict[str, Any]:
        return self.call("currency", "CURRENCY_ADDR", "POST", "/convert",
                         {"from": money, "to_code": to})

    def recommendations(self, exclude: list[str]) -> list[str]:
        qs = urlencode({"product_ids": ",".join(exclude)})
        return self.call("recommendation", "RECOMMENDATION_ADDR", "GET",
                         f"/recommendations?{qs}")["product_ids"]

    def cart(self, user: str) -> list[dict[str, Any]]:
        return self.call("cart", "CART_ADDR", "GET", f"/cart/{quote(user)}")["items"]

    def add_to_cart(self, user: str, pid: str, qty: Any) -> dict[str, Any]:
        return self.call("cart", "CART_ADDR", "POST", f"/cart/{quote(user)}/items",
                         {"product_id": pid, "quantity": qty})

    def checkout(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.call("checkout", "CHECKOUT_ADDR", "POST", "/checkout", body)
        except DependencyError as exc:
            raise DependencyError("checkout", f"checkout failed: {exc.message}") from exc

    def priced(self, product: dict[str, Any], currency: str) -> dict[str, Any]:
        return {**product, "price": self.convert(product["price"], currency)}


def build_app(shop: Shop | None = None) -> App:
    app = App(SERVICE)
    s = shop or Shop()

    @app.route("GET", "/")
    def home(req: Request) -> Any:
        currency = parse_currency(req)
        products = [s.priced(p, currency) for p in s.products()]
        return {"currency": currency, "products": products,
                "recommendations": s.recommendations([])}

    @app.route("GET", "/product/<id>")
    def product(req: Request) -> Any:
        currency = parse_currency(req)
        item = s.priced(s.product(req.params["id"]), currency)
        return {"currency": currency, "product": item,
                "recommendations": s.recommendations([item["id"]])}

    @app.route("GET", "/cart")
    def view_cart(req: Request) -> Any:
        currency = parse_currency(req)
        user = require_user(req.query.get("user"))
        lines, total = [], 0
        for item in s.cart(user):
            unit = s.convert(s.product(item["product_id"])["price"], currency)
            sub = line_total(unit, item["quantity"])
            total += sub["amount_cents"]
            lines.append({**item, "unit_price": unit, "line_total": sub})
        return {"user": user, "currency": currency, "items": lines,
                "subtotal": {"currency_code": currency, "amount_cents": total}}

    @app.route("POST", "/cart/add")
    def add_to_cart(req: Request) -> Any:
        body = req.json()
        user = require_user(body.get("user"))
        pid = body.get("product_id")
        if not isinstance(pid, str) or not pid:
            raise HTTPError(400, "product_id is required")
        s.product(pid)  # unknown products are rejected with the catalog's 404
        return s.add_to_cart(user, pid, body.get("quantity", 1))

    @app.route("POST", "/checkout")
    def checkout(req: Request) -> Any:
        body = req.json()
        require_user(body.get("user"))
        return s.checkout(body)

    return app


def main() -> None:
    build_app().run()


if __name__ == "__main__":
    main()
