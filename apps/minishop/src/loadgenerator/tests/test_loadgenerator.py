import io
import json
import random
import time
from collections import Counter
from datetime import date

import main
from shoplib import App, Logger, request
from shoplib.testing import running


def test_parse_rps():
    assert main.parse_rps("20") == 20 and main.parse_rps(None) == 5
    assert main.parse_rps("x") == 5 and main.parse_rps("-1") == 5


def test_step_mix_roughly_follows_weights():
    rng = random.Random(7)
    counts = Counter(main.choose_step(rng) for _ in range(5000))
    assert counts["product"] > counts["home"] > counts["checkout"] > 100


def test_checkout_plan_adds_item_first_and_card_not_expired():
    steps = main.plan("checkout", random.Random(1))
    assert [p for _, p, _ in steps] == ["/cart/add", "/checkout"]
    card = main.checkout_body("u1", "EUR", date(2030, 5, 1))["card"]
    assert card["expiration_year"] == 2032


def test_failures_are_aggregated():
    out = io.StringIO()
    f = main.Failures(Logger("lg", out))
    for _ in range(5):
        f.record(False, "boom")
    f.record(True)
    f.flush()
    f.flush()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert rec["level"] == "WARNING" and rec["failed"] == 5 and rec["total"] == 6


def test_drives_a_frontend(monkeypatch):
    frontend = App("frontend", Logger("frontend", io.StringIO()))
    for method, path in (("GET", "/"), ("GET", "/product/<id>"), ("GET", "/cart"),
                         ("POST", "/cart/add"), ("POST", "/checkout")):
        frontend.route(method, path)(lambda _r: {"ok": True})
    with running(frontend) as addr:
        monkeypatch.setenv("FRONTEND_ADDR", addr)
        app = App("loadgenerator", Logger("loadgenerator", io.StringIO()))
        gen = main.LoadGenerator(app, rps=50, workers=4)
        gen.start()
        time.sleep(0.5)
        gen.stop.set()
        with running(app) as lg:
            metrics = request(lg, "GET", "/metrics")[1]
    sent = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith("loadgen_requests_total{") and 'status="200"' in line)
    assert 10 <= sent <= 40
