import random

import main
from shoplib import DependencyError, request
from shoplib.testing import running

IDS = [f"P{i}" for i in range(9)]


def test_excludes_given_ids_and_caps_results():
    out = main.recommend(IDS, {"P0", "P1"}, 4, random.Random(1))
    assert len(out) == 4 and len(set(out)) == 4 and not {"P0", "P1"} & set(out)


def test_fewer_candidates_than_k():
    assert sorted(main.recommend(IDS[:3], {"P0"}, 4, random.Random(1))) == ["P1", "P2"]


def test_http_uses_catalog():
    with running(main.build_app(lambda: IDS)) as addr:
        status, out = request(addr, "GET", "/recommendations?product_ids=P1,P2")
        assert status == 200 and len(out["product_ids"]) == 4
        assert not {"P1", "P2"} & set(out["product_ids"])


def test_catalog_down_is_500(monkeypatch):
    monkeypatch.setenv("PRODUCTCATALOG_ADDR", "127.0.0.1:1")

    def failing():
        return main.fetch_product_ids()

    try:
        main.fetch_product_ids()
    except DependencyError as exc:
        assert "request to productcatalog failed" in exc.message
    else:
        raise AssertionError("expected DependencyError")
    with running(main.build_app(failing)) as addr:
        assert request(addr, "GET", "/recommendations")[0] == 500
