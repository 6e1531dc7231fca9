"""productcatalog: serves the product list from products.json."""

import json
from pathlib import Path
from typing import Any

from shoplib import App, HTTPError, Request

SERVICE = "productcatalog"
DATA_FILE = Path(__file__).resolve().parent / "products.json"


def load_products(path: Path = DATA_FILE) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        products = json.load(fh)
    for p in products:
        # Fail at start rather than serve malformed prices later.
        price = p["price"]
        if price["currency_code"] != "USD" or not isinstance(price["amount_cents"], int):
            raise ValueError(f"product {p['id']}: price must be integer USD cents")
    return products


def search(products: list[dict[str, Any]], query: str) -> list[dict[str, Any]]:
    """Case-insensitive substring match on name, description and categories."""
    q = query.strip().lower()
    if not q:
        return []
    return [
        p for p in products
        if q in p["name"].lower()
        or q in p["description"].lower()
        or any(q in c for c in p["categories"])
    ]


def build_app(products: list[dict[str, Any]]) -> App:
    app = App(SERVICE)
    by_id = {p["id"]: p for p in products}

    @app.route("GET", "/products")
    def list_products(_req: Request) -> Any:
        return {"products": products}

    @app.route("GET", "/products/<id>")
    def get_product(req: Request) -> Any:
        product = by_id.get(req.params["id"])
        if product is None:
            raise HTTPError(404, f"product {req.params['id']} not found")
        return product

    @app.route("GET", "/search")
    def search_products(req: Request) -> Any:
        return {"results": search(products, req.query.get("q", ""))}

    return app


def main() -> None:
    build_app(load_products()).run()


if __name__ == "__main__":
    main()
