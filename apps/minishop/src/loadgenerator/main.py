"""loadgenerator: drives user journeys against the frontend at a steady rate."""

import os
import queue
import random
import threading
import time
from datetime import date
from typing import Any

from prometheus_client import Counter

from shoplib import App, Logger, request

SERVICE = "loadgenerator"
TIMEOUT = 5.0
PRODUCT_IDS = ["OLJCESPC7Z", "66VCHSJNUP", "1YMWWN1N4O", "L9ECAV7KIM", "2ZYFJ3GM2N",
               "0PUK6V6EV0", "LS4PSXUNUM", "9SIQT8TOJO", "6E92ZMYYFZ"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CAD"]
# Relative weights of journey steps; checkout is rare like in a real shop.
STEPS = {"home": 30, "product": 35, "add_to_cart": 15, "view_cart": 15, "checkout": 10}


def parse_rps(raw: str | None) -> float:
    try:
        rps = float(raw or "5")
    except ValueError:
        rps = 5.0
    return rps if rps > 0 else 5.0


def choose_step(rng: random.Random) -> str:
    return rng.choices(list(STEPS), weights=list(STEPS.values()))[0]


def checkout_body(user: str, currency: str, today: date) -> dict[str, Any]:
    # Expiry computed from today so the test card never expires.
    return {"user": user, "currency": currency, "email": f"{user}@example.com",
            "address": {"street_address": "1600 Amphitheatre Parkway", "city": "Mountain View",
                        "state": "CA", "country": "US", "zip_code": "94043"},
            "card": {"number": "4432-8015-6152-0454", "cvv": "672",
                     "expiration_year": today.year + 2, "expiration_month": 1}}


def plan(step: str, rng: random.Random) -> list[tuple[str, str, Any]]:
    """The HTTP requests (method, path, body) one step performs."""
    user = f"u{rng.randint(1, 1000)}"
    pid = rng.choice(PRODUCT_IDS)
    cur = rng.choice(CURRENCIES)
    add = ("POST", "/cart/add", {"user": user, "product_id": pid,
                                 "quantity": rng.randint(1, 3)})
    if step == "home":
        return [("GET", f"/?currency={cur}", None)]
    if step == "product":
        return [("GET", f"/product/{pid}?currency={cur}", None)]
    if step == "add_to_cart":
        return [add]
    if step == "view_cart":
        return [("GET", f"/cart?user={user}&currency={cur}", None)]
    # A checkout needs a non-empty cart, so it always adds an item first.
    return [add, ("POST", "/checkout", checkout_body(user, cur, date.today()))]


class Failures:
    """Aggregates failed requests so warnings are logged at most once per second."""

    def __init__(self, log: Logger) -> None:
        self.log = log
        self.lock = threading.Lock()
        self.failed = self.total = 0
        self.last_error = ""

    def record(self, ok: bool, error: str = "") -> None:
        with self.lock:
            self.total += 1
            if not ok:
                self.failed += 1
                self.last_error = error

    def flush(self) -> None:
        with self.lock:
            failed, total, err = self.failed, self.total, self.last_error
            self.failed = self.total = 0
        if failed:
            self.log.warning(f"{failed} of {total} requests failed in the last second",
                             failed=failed, total=total, last_error=err)


class LoadGenerator:
    def __init__(self, app: App, rps: float, workers: int | None = None) -> None:
        self.app, self.rps = app, rps
        self.workers = workers or min(64, max(4, int(rps * 2)))
        self.tokens: queue.Queue[None] = queue.Queue(maxsize=self.workers * 2)
        self.stop = threading.Event()
        self.failures = Failures(app.log)
        self.requests = Counter("loadgen_requests_total", "Requests sent to the frontend",
                                ["step", "status"], registry=app.registry)
        self.dropped = Counter("loadgen_dropped_ticks_total",
                               "Ticks skipped because all workers were busy",
                               registry=app.registry)

    def start(self) -> None:
        threads = [threading.Thread(target=self._pace, daemon=True),
                   threading.Thread(target=self._report, daemon=True)]
        threads += [threading.Thread(target=self._work, args=(random.Random(),), daemon=True)
                    for _ in range(self.workers)]
        for t in threads:
            t.start()
        self.app.log.info("load started", rps=self.rps, workers=self.workers)

    def _pace(self) -> None:
        # Absolute schedule so slow iterations do not drift the overall rate.
        interval, next_at = 1.0 / self.rps, time.monotonic()
        while not self.stop.is_set():
            try:
                self.tokens.put_nowait(None)
            except queue.Full:
                self.dropped.inc()
            next_at += interval
            self.stop.wait(max(0.0, next_at - time.monotonic()))

    def _report(self) -> None:
        while not self.stop.wait(1.0):
            self.failures.flush()

    def _work(self, rng: random.Random) -> None:
        while not self.stop.is_set():
            try:
                self.tokens.get(timeout=0.5)
            except queue.Empty:
                continue
            step = choose_step(rng)
            for method, path, body in plan(step, rng):
                if not self._send(step, method, path, body):
                    break  # later requests of the step depend on this one

    def _send(self, step: str, method: str, path: str, body: Any) -> bool:
        addr = os.environ.get("FRONTEND_ADDR", "").strip()
        try:
            if not addr:
                raise OSError("FRONTEND_ADDR is not set")
            status, payload = request(addr, method, path, body, TIMEOUT)
        except Exception as exc:  # any transport failure counts as a failed request
            self.requests.labels(step, "error").inc()
            self.failures.record(False, f"{method} {path}: {exc}")
            return False
        self.requests.labels(step, str(status)).inc()
        ok = status < 400
        detail = payload.get("error") if isinstance(payload, dict) else ""
        self.failures.record(ok, "" if ok else f"{method} {path}: HTTP {status}: {detail}")
        return ok


def main() -> None:
    app = App(SERVICE)
    gen = LoadGenerator(app, parse_rps(os.environ.get("LOAD_RPS")))
    app.run(on_start=gen.start)


if __name__ == "__main__":
    main()
