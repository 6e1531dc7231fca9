"""payment: validates a card (Luhn, expiry) and "charges" it."""

import uuid
from datetime import date
from typing import Any

from shoplib import App, HTTPError, Request

SERVICE = "payment"


def luhn_valid(number: str) -> bool:
    """Luhn checksum; spaces and dashes are accepted as separators."""
    digits = number.replace(" ", "").replace("-", "")
    if not digits.isdigit() or not 12 <= len(digits) <= 19:
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def is_expired(year: int, month: int, today: date) -> bool:
    # A card is valid through the last day of its expiration month.
    return (year, month) < (today.year, today.month)


def validate_charge(body: dict[str, Any], today: date) -> int:
    """Return the amount in cents or raise HTTPError(400) describing the problem."""
    amount = body.get("amount")
    card = body.get("card")
    if not isinstance(amount, dict) or not isinstance(card, dict):
        raise HTTPError(400, "expected {amount: {currency_code, amount_cents}, card: {...}}")
    cents = amount.get("amount_cents")
    if not isinstance(cents, int) or isinstance(cents, bool) or cents < 0:
        raise HTTPError(400, "amount.amount_cents must be a non-negative integer")
    if not luhn_valid(str(card.get("number", ""))):
        raise HTTPError(400, "invalid card number")
    cvv = str(card.get("cvv", ""))
    if not (cvv.isdigit() and len(cvv) in (3, 4)):
        raise HTTPError(400, "invalid cvv")
    try:
        year = int(card["expiration_year"])
        month = int(card["expiration_month"])
    except (KeyError, TypeError, ValueError) as exc:
        raise HTTPError(400, "invalid expiration date") from exc
    if not 1 <= month <= 12:
        raise HTTPError(400, "invalid expiration month")
    if is_expired(year, month, today):
        raise HTTPError(400, f"card expired {month:02d}/{year}")
    return cents


def build_app() -> App:
    app = App(SERVICE)

    @app.route("POST", "/charge")
    def charge(req: Request) -> Any:
        body = req.json()
        cents = validate_charge(body, date.today())
        txn = str(uuid.uuid4())
        app.log.info("payment charged", transaction_id=txn, amount_cents=cents,
                     currency_code=body["amount"].get("currency_code"))
        return {"transaction_id": txn}

    return app


def main() -> None:
    build_app().run()


if __name__ == "__main__":
    main()
