"""A checkout through minishop's frontend as a shopper makes one: an item into the cart, then the
order placed with a card that is accepted. Tests on either platform use it to make a trace, a 500
or an alert happen."""

from __future__ import annotations

import time
from typing import Any

import requests


def order(user: str) -> dict[str, Any]:
    return {"user": user, "currency": "USD", "email": f"{user}@example.com",
            "address": {"street_address": "1600 Amphitheatre Parkway", "city": "Mountain View", "state": "CA",
                        "country": "US", "zip_code": "94043"},
            "card": {"number": "4432-8015-6152-0454", "cvv": "672", "expiration_year": time.gmtime().tm_year + 2,
                     "expiration_month": 1}}


def checkout(frontend: str, user: str, headers: dict[str, str] | None = None) -> requests.Response:
    """The frontend's answer to one checkout; `frontend` is its address, with or without http://."""
    base = frontend if frontend.startswith("http") else f"http://{frontend}"
    requests.post(f"{base}/cart/add", json={"user": user, "product_id": "OLJCESPC7Z", "quantity": 1},
                  headers=headers, timeout=10)
    return requests.post(f"{base}/checkout", json=order(user), headers=headers, timeout=10)
