"""recommendation: suggests products the user is not already looking at."""

import random
from collections.abc import Callable
from typing import Any

from shoplib import App, Request, call

SERVICE = "recommendation"
MAX_RESULTS = 4


def recommend(all_ids: list[str], exclude: set[str], k: int, rng: random.Random) -> list[str]:
    candidates = [pid for pid in all_ids if pid not in exclude]
    return rng.sample(candidates, min(k, len(candidates)))


def fetch_product_ids() -> list[str]:
    # Read on every request: the catalog is the source of truth and small.
    data = call("productcatalog", "PRODUCTCATALOG_ADDR", "GET", "/products")
    return [p["id"] for p in data["products"]]


def build_app(product_ids: Callable[[], list[str]] = fetch_product_ids,
              rng: random.Random | None = None) -> App:
    app = App(SERVICE)
    chooser = rng or random.Random()

    @app.route("GET", "/recommendations")
    def recommendations(req: Request) -> Any:
        raw = req.query.get("product_ids", "")
        exclude = {p.strip() for p in raw.split(",") if p.strip()}
        return {"product_ids": recommend(product_ids(), exclude, MAX_RESULTS, chooser)}

    return app


def main() -> None:
    build_app().run()


if __name__ == "__main__":
    main()
