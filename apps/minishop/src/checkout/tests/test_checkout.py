import pytest

import main
from shoplib import DependencyError, HTTPError, request
from shoplib.testing import running

PRICES = {"A": 1000, "B": 250}  # USD cents
REQ = {"user": "u1", "currency": "eur", "email": "a@b.io",
       "address": {"country": "US"}, "card": {"number": "4432801561520454"}}


def fake_deps(calls, items=None, fail=None):
    def rec(name, result):
        def fn(*args):
            calls.append(name)
            if name == fail:
                raise DependencyError(name, f"request to {name} failed: boom")
            return result(*args) if callable(result) else result
        return fn

    cart = [{"product_id": "A", "quantity": 2}, {"product_id": "B", "quantity": 1}]
    return main.Deps(
        get_cart=rec("cart", cart if items is None else items),
        get_price=rec("productcatalog",
                      lambda pid: {"currency_code": "USD", "amount_cents": PRICES[pid]}),
        # 1 USD = 2 EUR keeps the arithmetic obvious.
        convert=rec("currency", lambda m, to: {"currency_code": to,
                                               "amount_cents": m["amount_cents"] * 2}),
        quote_shipping=rec("shipping", {"currency_code": "USD", "amount_cents": 500}),
        charge=rec("payment", "txn-1"),
        ship=rec("ship", "TRK-1"),
        send_email=rec("email", None),
        empty_cart=rec("empty", None),
    )


def test_compute_total():
    eur = lambda c: {"currency_code": "EUR", "amount_cents": c}  # noqa: E731
    assert main.compute_total([(eur(100), 3), (eur(5), 2)], eur(7), "EUR") == eur(317)
    with pytest.raises(ValueError):
        main.compute_total([({"currency_code": "USD", "amount_cents": 1}, 1)], eur(0), "EUR")


def test_place_order_happy_path():
    calls = []
    order = main.place_order(main.parse_request(REQ), fake_deps(calls), lambda: "o-1")
    # (2*1000 + 250 + 500 shipping) USD * 2
    assert order["total"] == {"currency_code": "EUR", "amount_cents": 5500}
    assert order["tracking_id"] == "TRK-1" and order["order_id"] == "o-1"
    assert calls.index("payment") < calls.index("ship") < calls.index("email")
    assert calls[-1] == "empty"


def test_empty_cart_is_client_error():
    with pytest.raises(HTTPError) as exc:
        main.place_order(main.parse_request(REQ), fake_deps([], items=[]), lambda: "x")
    assert exc.value.status == 400


def test_missing_field_is_client_error():
    with pytest.raises(HTTPError):
        main.parse_request({**REQ, "card": None})


def test_http_dependency_failure_is_500():
    with running(main.build_app(lambda: fake_deps([], fail="payment"))) as addr:
        status, out = request(addr, "POST", "/checkout", REQ)
    assert status == 500 and "payment" in out["error"]


def test_http_ok():
    with running(main.build_app(lambda: fake_deps([]))) as addr:
        status, out = request(addr, "POST", "/checkout", REQ)
    assert status == 200 and out["total"]["amount_cents"] == 5500
