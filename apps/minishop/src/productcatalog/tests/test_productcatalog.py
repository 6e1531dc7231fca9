import main
from shoplib import request
from shoplib.testing import running


def test_products_file_is_valid():
    products = main.load_products()
    assert len(products) == 9
    assert len({p["id"] for p in products}) == 9


def test_search_matches_name_description_and_category():
    products = main.load_products()
    assert [p["id"] for p in main.search(products, "MUG")] == ["6E92ZMYYFZ"]
    assert {p["id"] for p in main.search(products, "kitchen")} >= {"6E92ZMYYFZ", "9SIQT8TOJO"}
    assert main.search(products, "  ") == []


def test_http_routes():
    with running(main.build_app(main.load_products())) as addr:
        status, body = request(addr, "GET", "/products/OLJCESPC7Z")
        assert status == 200 and body["name"] == "Sunglasses"
        assert request(addr, "GET", "/products/NOPE")[0] == 404
        assert len(request(addr, "GET", "/products")[1]["products"]) == 9
        assert request(addr, "GET", "/search?q=watch")[1]["results"][0]["id"] == "1YMWWN1N4O"
        assert request(addr, "GET", "/nothing")[0] == 404
        metrics = request(addr, "GET", "/metrics")[1]
        assert 'route="/products/<id>"' in metrics
