"""The symptom probe as a user of a real web app: it logs in with a form, keeps the session's cookie,
and fails an attempt whose page is served 200 but shows the user an error (Bank of Anthos' frontend
renders its home page with "$---" for a balance it could not read). A real HTTP server on loopback."""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from faultkit.catalog.model import Probe
from faultkit.observe.sampler import Sampler, page_problem
from faultkit.schema import validator


class Bank:
    """A login form that sets a cookie, and a home page that needs it."""

    def __init__(self) -> None:
        self.balance_ok = True
        self.forms: list[dict[str, list[str]]] = []
        bank = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: str = "", headers: dict[str, str] | None = None) -> None:
                data = body.encode()
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                bank.forms.append(form)
                if self.path == "/login" and form.get("password") == ["bankofanthos"]:
                    self._send(302, headers={"Location": "/home", "Set-Cookie": "token=abc; Path=/"})
                else:
                    self._send(401, "login failed")

            def do_GET(self) -> None:
                if self.path == "/login":
                    self._send(200, "<form>Sign in</form>")
                elif "token=abc" not in (self.headers.get("Cookie") or ""):
                    self._send(302, headers={"Location": "/login"})
                else:
                    self._send(200, f"Current Balance {'$1,024.00' if bank.balance_ok else '$---'}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


class OneEndpoint:
    def __init__(self, url: str) -> None:
        self.url = url

    def endpoint(self, service: str, port: int | None = None) -> str:
        return self.url


@pytest.fixture
def bank() -> Iterator[Bank]:
    b = Bank()
    thread = threading.Thread(target=b.server.serve_forever, daemon=True)
    thread.start()
    yield b
    b.server.shutdown()
    b.server.server_close()


LOGIN = ({"method": "POST", "path": "/login", "form": {"username": "testuser", "password": "bankofanthos"}},)


def attempt(bank: Bank, **probe: object) -> dict:
    sampler = Sampler(OneEndpoint(bank.url), (), Probe(**{"service": "frontend", "path": "/home", **probe}))
    try:
        return dict(sampler.run_probe())
    finally:
        sampler.close()


def test_a_form_login_keeps_its_cookie_and_every_redirect_is_counted(bank):
    got = attempt(bank, setup=LOGIN, expect_text=("Current Balance",), error_text=("$---",))
    assert got["ok"] and got["status"] == 200 and "page" not in got, got
    # the login's 302 and the home page it redirects to, then the probe's own request
    assert got["statuses"] == [302, 200, 200]
    assert bank.forms == [{"username": ["testuser"], "password": ["bankofanthos"]}]


def test_a_page_served_200_that_shows_an_error_text_fails_the_attempt(bank):
    bank.balance_ok = False
    got = attempt(bank, setup=LOGIN, expect_text=("Current Balance",), error_text=("$---",))
    assert got["status"] == 200 and not got["ok"]
    assert got["page"] == "shows '$---'"


def test_a_page_without_its_expected_text_fails_the_attempt(bank):
    # no login: the home page sends the user to the sign-in form, served 200
    got = attempt(bank, expect_text=("Current Balance",))
    assert got["status"] == 200 and not got["ok"] and got["page"] == "no 'Current Balance'"
    assert got["statuses"] == [302, 200]
    # without a text to expect, status alone decides, as before
    assert attempt(bank)["ok"]


def test_page_problem_reads_the_first_error_text_shown():
    assert page_problem("ok", (), ()) is None
    assert page_problem("a $--- b Error", ("a",), ("Error", "$---")) == "shows 'Error'"
    assert page_problem("x", ("x", "y"), ("x",)) == "no 'y'"


def test_a_probe_with_both_a_json_body_and_a_form_is_refused_by_the_schema():
    check = validator("entry")
    probe = {"service": "frontend", "path": "/login", "body": {"a": 1}, "form": {"a": "1"}}
    errors = list(check.iter_errors({"probe": probe}))
    assert any(list(e.absolute_path)[:1] == ["probe"] for e in errors), [e.message for e in errors]
    step = {"service": "frontend", "path": "/", "setup": [{"path": "/login", "body": {}, "form": {}}]}
    errors = list(check.iter_errors({"probe": step}))
    assert any(list(e.absolute_path)[:3] == ["probe", "setup", 0] for e in errors), [e.message for e in errors]


def test_setup_after_failure_signs_in_once_and_again_when_an_attempt_fails(bank):
    sampler = Sampler(OneEndpoint(bank.url), (), Probe(service="frontend", path="/home", setup=LOGIN,
                                                       setup_when="after-failure", expect_text=("Current Balance",),
                                                       error_text=("$---",)))
    try:
        first, second = sampler.run_probe(), sampler.run_probe()
        assert first["ok"] and first["statuses"] == [302, 200, 200]
        assert second["ok"] and second["statuses"] == [200]  # the session's cookie, no second login
        bank.balance_ok = False
        assert not sampler.run_probe()["ok"]
        bank.balance_ok = True
        again = sampler.run_probe()
        assert again["ok"] and again["statuses"] == [302, 200, 200]  # signed in again after the failure
        assert len(bank.forms) == 2
    finally:
        sampler.close()
