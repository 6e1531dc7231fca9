import io
import json

import pytest

import main
from shoplib import HTTPError, Logger, request
from shoplib.testing import running

ORDER = {"order_id": "o-1", "tracking_id": "TRK-1",
         "total": {"currency_code": "EUR", "amount_cents": 12345}}


def test_validate():
    assert main.validate({"email": "a@b.io", "order": ORDER})[0] == "a@b.io"
    for bad in ({"email": "nope", "order": ORDER}, {"email": "a@b.io", "order": {}}):
        with pytest.raises(HTTPError):
            main.validate(bad)


def test_render():
    assert "Total: 123.45 EUR" in main.render(ORDER)


def test_http_logs_confirmation():
    app = main.build_app()
    stream = io.StringIO()
    app.log = Logger("email", stream)
    with running(app) as addr:
        body = {"email": "a@b.io", "order": ORDER}
        assert request(addr, "POST", "/send_confirmation", body)[0] == 200
        assert request(addr, "POST", "/send_confirmation", {"email": "x"})[0] == 400
    record = json.loads(stream.getvalue().splitlines()[0])
    assert record["level"] == "INFO" and record["message"] == "order confirmation sent"
    assert record["service"] == "email" and record["ts"].endswith("Z")
