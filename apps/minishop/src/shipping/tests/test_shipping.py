import pytest

import main
from shoplib import HTTPError, request
from shoplib.testing import running

ADDRESS = {"street_address": "1 Main St", "city": "Springfield", "country": "US",
           "zip_code": "12345"}


def test_quote():
    assert main.quote_cents([]) == 0
    assert main.quote_cents([{"product_id": "a", "quantity": 2},
                             {"product_id": "b", "quantity": 1}]) == main.BASE_CENTS + 450


def test_bad_items_rejected():
    with pytest.raises(HTTPError):
        main.parse_items({"items": [{"product_id": "a", "quantity": 0}]})
    with pytest.raises(HTTPError):
        main.parse_items({"items": "x"})


def test_tracking_ids_are_unique():
    ids = {main.new_tracking_id() for _ in range(50)}
    assert len(ids) == 50 and all(t.startswith("TRK-") and len(t) == 16 for t in ids)


def test_http():
    items = [{"product_id": "a", "quantity": 1}]
    with running(main.build_app()) as addr:
        status, out = request(addr, "POST", "/quote", {"address": ADDRESS, "items": items})
        assert status == 200 and out["cost"]["amount_cents"] == 749
        status, out = request(addr, "POST", "/ship", {"address": ADDRESS, "items": items})
        assert status == 200 and out["tracking_id"].startswith("TRK-")
        assert request(addr, "POST", "/ship", {"address": {}, "items": items})[0] == 400
