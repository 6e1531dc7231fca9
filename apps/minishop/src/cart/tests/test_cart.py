import io
import json

import pytest

import main
import store
from shoplib import DependencyError, HTTPError, Logger, request
from shoplib.testing import running


class FakeKV:
    def __init__(self):
        self.data = {}

    def get(self, key):
        return self.data.get(key)

    def set(self, key, value):
        self.data[key] = value

    def delete(self, key):
        self.data.pop(key, None)


def test_add_item_merges_quantities():
    items = main.add_item([], "A", 1)
    items = main.add_item(items, "B", 2)
    items = main.add_item(items, "A", 3)
    assert items == [{"product_id": "A", "quantity": 4}, {"product_id": "B", "quantity": 2}]
    assert main.add_item(items, "A", 999)[0]["quantity"] == main.MAX_QUANTITY


def test_parse_item_validation():
    assert main.parse_item({"product_id": "A"}) == ("A", 1)
    for bad in ({"product_id": ""}, {"product_id": "A", "quantity": 0},
                {"product_id": "A", "quantity": True}, {"quantity": 1}):
        with pytest.raises(HTTPError):
            main.parse_item(bad)


def test_http_with_fake_store():
    kv = FakeKV()
    with running(main.build_app(kv)) as addr:
        assert request(addr, "GET", "/cart/u1")[1] == {"user": "u1", "items": []}
        request(addr, "POST", "/cart/u1/items", {"product_id": "A", "quantity": 2})
        status, out = request(addr, "POST", "/cart/u1/items", {"product_id": "A"})
        assert status == 200 and out["items"] == [{"product_id": "A", "quantity": 3}]
        assert json.loads(kv.data["cart:u1"])[0]["quantity"] == 3
        assert request(addr, "DELETE", "/cart/u1")[0] == 200
        assert "cart:u1" not in kv.data
        assert request(addr, "GET", "/cart/bad%20user")[0] == 400


def test_store_unreachable_is_500_with_error_log(monkeypatch):
    monkeypatch.setenv("CARTSTORE_ADDR", "127.0.0.1:1")
    monkeypatch.setenv("CARTSTORE_PASSWORD", "pw")
    with pytest.raises(DependencyError) as exc:
        store.RemoteStore().get("cart:u1")
    assert exc.value.message == "cart store request failed: connection refused"
    app = main.build_app()
    out = io.StringIO()
    app.log = Logger("cart", out)
    with running(app) as addr:
        assert request(addr, "GET", "/cart/u1")[0] == 500
        assert request(addr, "GET", "/readyz")[0] == 200
    record = json.loads(out.getvalue().splitlines()[0])
    assert record["level"] == "ERROR" and record["dependency"] == "cartstore"


def test_readiness_requires_env(monkeypatch):
    monkeypatch.delenv("CARTSTORE_PASSWORD", raising=False)
    monkeypatch.setenv("CARTSTORE_ADDR", "x:1")
    assert not main.env_configured()
