"""shipping: quotes shipping cost and creates shipments with tracking ids."""

import secrets
import string
from typing import Any

from shoplib import App, HTTPError, Request

SERVICE = "shipping"
BASE_CENTS = 599  # flat handling fee per order, USD
PER_ITEM_CENTS = 150  # per unit shipped, USD
_TRACKING_ALPHABET = string.ascii_uppercase + string.digits


def parse_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    items = body.get("items")
    if not isinstance(items, list):
        raise HTTPError(400, "items must be a list")
    for item in items:
        qty = item.get("quantity") if isinstance(item, dict) else None
        if not isinstance(qty, int) or isinstance(qty, bool) or qty < 1:
            raise HTTPError(400, "each item needs product_id and a positive quantity")
    return items


def parse_address(body: dict[str, Any]) -> dict[str, Any]:
    address = body.get("address")
    if not isinstance(address, dict) or not address.get("country"):
        raise HTTPError(400, "address must be an object with at least a country")
    return address


def quote_cents(items: list[dict[str, Any]]) -> int:
    """USD cents; an empty shipment is free."""
    units = sum(item["quantity"] for item in items)
    return 0 if units == 0 else BASE_CENTS + PER_ITEM_CENTS * units


def new_tracking_id() -> str:
    body = "".join(secrets.choice(_TRACKING_ALPHABET) for _ in range(12))
    return f"TRK-{body}"


def build_app() -> App:
    app = App(SERVICE)

    @app.route("POST", "/quote")
    def quote(req: Request) -> Any:
        body = req.json()
        parse_address(body)
        cents = quote_cents(parse_items(body))
        return {"cost": {"currency_code": "USD", "amount_cents": cents}}

    @app.route("POST", "/ship")
    def ship(req: Request) -> Any:
        body = req.json()
        address = parse_address(body)
        items = parse_items(body)
        tracking = new_tracking_id()
        app.log.info("shipment created", tracking_id=tracking, country=address.get("country"),
                     units=sum(i["quantity"] for i in items))
        return {"tracking_id": tracking}

    return app


def main() -> None:
    build_app().run()


if __name__ == "__main__":
    main()
