import io
import json

import main
from shoplib import DependencyError, HTTPError, Logger, request
from shoplib.testing import running

PRODUCTS = [{"id": "A", "name": "a", "price": {"currency_code": "USD", "amount_cents": 100}},
            {"id": "B", "name": "b", "price": {"currency_code": "USD", "amount_cents": 250}}]


def fake_call(carts, fail=None):
    def caller(dep, env, method, path, body=None):
        if dep == fail:
            raise DependencyError(dep, f"request to {dep} failed: [Errno 111] Connection refused")
        if dep == "productcatalog":
            if path == "/products":
                return {"products": PRODUCTS}
            match = [p for p in PRODUCTS if path.endswith("/" + p["id"])]
            if not match:
                raise HTTPError(404, "productcatalog: not found")
            return match[0]
        if dep == "currency":
            return {"currency_code": body["to_code"],
                    "amount_cents": body["from"]["amount_cents"] * 2}
        if dep == "recommendation":
            return {"product_ids": ["B"]}
        if dep == "cart":
            user = path.split("/")[2]
            if method == "POST":
                carts.setdefault(user, []).append(body)
            return {"items": carts.get(user, [])}
        if dep == "checkout":
            return {"order_id": "o1"}
        raise AssertionError(dep)
    return caller


def test_line_total():
    assert main.line_total({"currency_code": "EUR", "amount_cents": 5}, 3)["amount_cents"] == 15


def test_pages_and_cart_flow():
    carts = {}
    with running(main.build_app(main.Shop(fake_call(carts)))) as addr:
        status, home = request(addr, "GET", "/?currency=eur")
        assert status == 200 and home["products"][1]["price"]["amount_cents"] == 500
        assert home["recommendations"] == ["B"]
        assert request(addr, "GET", "/product/A")[1]["product"]["price"]["amount_cents"] == 200
        assert request(addr, "GET", "/product/Z")[0] == 404
        assert request(addr, "GET", "/?currency=e1")[0] == 400
        add = {"user": "u1", "product_id": "B", "quantity": 2}
        assert request(addr, "POST", "/cart/add", add)[0] == 200
        assert request(addr, "POST", "/cart/add", {"user": "u1", "product_id": "Z"})[0] == 404
        status, cart = request(addr, "GET", "/cart?user=u1&currency=EUR")
        assert status == 200 and cart["subtotal"]["amount_cents"] == 1000
        assert request(addr, "GET", "/cart")[0] == 400
        assert request(addr, "POST", "/checkout", {"user": "u1"})[1] == {"order_id": "o1"}


def test_checkout_failure_is_500_and_logged():
    app = main.build_app(main.Shop(fake_call({}, fail="checkout")))
    out = io.StringIO()
    app.log = Logger("frontend", out)
    with running(app) as addr:
        assert request(addr, "POST", "/checkout", {"user": "u1"})[0] == 500
        metrics = request(addr, "GET", "/metrics")[1]
    record = json.loads(out.getvalue().splitlines()[0])
    assert record["level"] == "ERROR" and record["message"].startswith("checkout failed: ")
    assert ('http_server_request_duration_seconds_count{http_request_method="POST",'
            'http_response_status_code="500",http_route="/checkout"') in metrics
