"""cart: per-user shopping carts persisted in cartstore."""

import json
import os
import re
from typing import Any, Protocol

from shoplib import App, HTTPError, Request
from store import RemoteStore

SERVICE = "cart"
MAX_QUANTITY = 999
_USER_RE = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")


class KV(Protocol):
    def get(self, key: str) -> str | None: ...
    def set(self, key: str, value: str) -> None: ...
    def delete(self, key: str) -> None: ...


def add_item(items: list[dict[str, Any]], product_id: str, quantity: int) -> list[dict[str, Any]]:
    """Return a new item list with quantity merged into an existing line if present."""
    merged = [dict(i) for i in items]
    for item in merged:
        if item["product_id"] == product_id:
            item["quantity"] = min(MAX_QUANTITY, item["quantity"] + quantity)
            return merged
    merged.append({"product_id": product_id, "quantity": quantity})
    return merged


def parse_item(body: dict[str, Any]) -> tuple[str, int]:
    pid = body.get("product_id")
    qty = body.get("quantity", 1)
    if not isinstance(pid, str) or not pid or " " in pid:
        raise HTTPError(400, "product_id must be a non-empty string")
    if not isinstance(qty, int) or isinstance(qty, bool) or not 1 <= qty <= MAX_QUANTITY:
        raise HTTPError(400, f"quantity must be an integer between 1 and {MAX_QUANTITY}")
    return pid, qty


def cart_key(user: str) -> str:
    # Keys go on a space-separated protocol line, so users are restricted.
    if not _USER_RE.match(user):
        raise HTTPError(400, "invalid user id")
    return f"cart:{user}"


def load_items(store: KV, user: str) -> list[dict[str, Any]]:
    raw = store.get(cart_key(user))
    return json.loads(raw) if raw else []


def env_configured() -> bool:
    return bool(os.environ.get("CARTSTORE_ADDR", "").strip()
                and os.environ.get("CARTSTORE_PASSWORD", ""))


def build_app(store: KV | None = None) -> App:
    app = App(SERVICE)
    kv: KV = store or RemoteStore()
    app.ready_check = env_configured

    @app.route("GET", "/cart/<user>")
    def get_cart(req: Request) -> Any:
        user = req.params["user"]
        return {"user": user, "items": load_items(kv, user)}

    @app.route("POST", "/cart/<user>/items")
    def add(req: Request) -> Any:
        user = req.params["user"]
        pid, qty = parse_item(req.json())
        items = add_item(load_items(kv, user), pid, qty)
        kv.set(cart_key(user), json.dumps(items, separators=(",", ":")))
        return {"user": user, "items": items}

    @app.route("DELETE", "/cart/<user>")
    def empty(req: Request) -> Any:
        user = req.params["user"]
        kv.delete(cart_key(user))
        return {"user": user, "items": []}

    return app


def main() -> None:
    build_app().run()


if __name__ == "__main__":
    main()
