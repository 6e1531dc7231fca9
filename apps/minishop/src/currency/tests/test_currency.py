from decimal import Decimal

import pytest

import main
from shoplib import HTTPError, request
from shoplib.testing import running

RATES = {"EUR": Decimal("1"), "USD": Decimal("1.25"), "JPY": Decimal("150")}


def test_convert_math():
    assert main.convert(RATES, 125, "USD", "EUR") == 100
    assert main.convert(RATES, 100, "EUR", "USD") == 125
    assert main.convert(RATES, 1000, "USD", "USD") == 1000
    assert main.convert(RATES, 125, "USD", "JPY") == 15000


def test_convert_rounds_half_even():
    rates = {"EUR": Decimal("1"), "XXX": Decimal("0.5")}
    assert main.convert(rates, 5, "EUR", "XXX") == 2  # 2.5 -> 2
    assert main.convert(rates, 7, "EUR", "XXX") == 4  # 3.5 -> 4


def test_unknown_currency_is_client_error():
    with pytest.raises(HTTPError) as exc:
        main.convert(RATES, 1, "USD", "ZZZ")
    assert exc.value.status == 400


def test_rates_file_loads():
    rates = main.load_rates()
    assert rates["EUR"] == 1 and "USD" in rates and "_comment" not in rates


def test_http_convert():
    with running(main.build_app(main.load_rates())) as addr:
        body = {"from": {"currency_code": "usd", "amount_cents": 1999}, "to_code": "EUR"}
        status, out = request(addr, "POST", "/convert", body)
        assert status == 200 and out["currency_code"] == "EUR"
        assert 1800 < out["amount_cents"] < 1900
        assert request(addr, "POST", "/convert", {"from": 3})[0] == 400
        assert "USD" in request(addr, "GET", "/currencies")[1]["currency_codes"]
