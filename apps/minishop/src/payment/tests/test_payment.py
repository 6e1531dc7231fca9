from datetime import date

import pytest

import main
from shoplib import HTTPError, request
from shoplib.testing import running

TODAY = date(2030, 6, 15)


def card(**kw):
    base = {"number": "4432-8015-6152-0454", "cvv": "672",
            "expiration_year": 2031, "expiration_month": 1}
    base.update(kw)
    return base


def test_luhn():
    assert main.luhn_valid("4432-8015-6152-0454")
    assert main.luhn_valid("4111 1111 1111 1111")
    assert not main.luhn_valid("4111 1111 1111 1112")
    assert not main.luhn_valid("abcd")
    assert not main.luhn_valid("")


def test_expiry_is_inclusive_of_current_month():
    assert not main.is_expired(2030, 6, TODAY)
    assert main.is_expired(2030, 5, TODAY)
    assert main.is_expired(2029, 12, TODAY)


@pytest.mark.parametrize("bad", [
    card(number="4111111111111112"), card(cvv="1"),
    card(expiration_year=2030, expiration_month=5), card(expiration_month=13),
])
def test_invalid_cards_are_client_errors(bad):
    with pytest.raises(HTTPError) as exc:
        main.validate_charge({"amount": {"currency_code": "USD", "amount_cents": 1}, "card": bad},
                             TODAY)
    assert exc.value.status == 400


def test_http_charge():
    year = date.today().year + 2
    with running(main.build_app()) as addr:
        body = {"amount": {"currency_code": "EUR", "amount_cents": 4200},
                "card": card(expiration_year=year)}
        status, out = request(addr, "POST", "/charge", body)
        assert status == 200 and len(out["transaction_id"]) == 36
        body["card"] = card(expiration_year=2000)
        assert request(addr, "POST", "/charge", body)[0] == 400
