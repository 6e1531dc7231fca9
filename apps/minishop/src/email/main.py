"""email: "sends" order confirmations (logs them; no real mail is sent)."""

import re
from typing import Any

from shoplib import App, HTTPError, Request

SERVICE = "email"
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def validate(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    email = body.get("email")
    order = body.get("order")
    if not isinstance(email, str) or not _EMAIL_RE.match(email):
        raise HTTPError(400, "invalid email address")
    if not isinstance(order, dict) or not order.get("order_id"):
        raise HTTPError(400, "order with order_id is required")
    return email, order


def render(order: dict[str, Any]) -> str:
    """Plain-text body; kept to prove the order has everything a mail needs."""
    total = order.get("total") or {}
    amount = total.get("amount_cents", 0)
    return (f"Thank you for your order {order['order_id']}.\n"
            f"Total: {amount // 100}.{amount % 100:02d} {total.get('currency_code', '')}\n"
            f"Tracking: {order.get('tracking_id', 'n/a')}\n")


def build_app() -> App:
    app = App(SERVICE)

    @app.route("POST", "/send_confirmation")
    def send_confirmation(req: Request) -> Any:
        email, order = validate(req.json())
        text = render(order)
        app.log.info("order confirmation sent", email=email, order_id=order["order_id"],
                     bytes=len(text))
        return {"status": "sent"}

    return app


def main() -> None:
    build_app().run()


if __name__ == "__main__":
    main()
