"""The report shows what a verdict rests on: for the shipped checkout quote fault, the after
windows' 30 and 24 server errors per minute against the threshold of 4, per cycle and window,
visible as bars with one sample each, and the causal chain with its checkpoints. Read back from the
HTML and from the DOM headless Chromium renders, and seen in its screenshot."""

from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.report.test_report import browse

REPO = Path(__file__).resolve().parents[2]
FAULT = "minishop-code-checkout-shipping-quote"


class Page(HTMLParser):
    """Rules (rule, cycle) -> cells, bars (window, value, height), window rows, chain checkpoints."""

    def __init__(self) -> None:
        super().__init__()
        self.rules: dict[tuple[str, str], list[str]] = {}
        self.windows: dict[str, list[str]] = {}
        self.bars: list[tuple[str, str, float, float]] = []  # chart, window, value, height
        self.checkpoints: list[tuple[str, list[str]]] = []  # role, cells
        self.chart = ""
        self._row: list[str] | None = None
        self._key: tuple[str, ...] = ()
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "svg":
            self.chart = a.get("aria-label", "")
        elif tag == "rect" and "bar" in a.get("class", ""):
            self.bars.append((self.chart, a["data-window"], float(a["data-value"]), float(a["height"])))
        elif tag == "tr" and a.get("class") in ("rule", "win", "checkpoint"):
            self._row = []
            self._key = (a["class"], a.get("data-rule") or a.get("data-window") or a.get("data-role", ""),
                         a.get("data-cycle", ""))
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            kind, name, cycle = self._key
            if kind == "rule":
                self.rules[(name, cycle)] = self._row
            elif kind == "win":
                self.windows[name] = self._row
            else:
                self.checkpoints.append((name, self._row))
            self._row = None


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    return page


def report(tmp_path: Path) -> Path:
    out = tmp_path / "report.html"
    env = {k: v for k, v in os.environ.items() if k != "FAULTKIT_ROOT"}
    proc = run_cli("report", "--fault", FAULT, "--out", str(out), cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr
    return out


def check_content(page: Page) -> None:
    # every rule per cycle, measured against threshold: the screens of both after windows
    assert page.rules[("screen-server-errors", "1")][2:4] == ["30.003", "4"]
    assert page.rules[("screen-server-errors", "2")][2:4] == ["24.002", "4"]
    assert page.rules[("screen-new-error-logs", "2")][2:4] == ["462.046", "10"]
    assert page.rules[("keeps-serving", "1")][4] == "pass"
    # per window, before and after side by side
    assert page.windows["after-1"][4] == "30.003" and page.windows["after-2"][4] == "24.002"
    assert page.windows["before-1"][4] == "0"
    errors = {w: (v, h) for chart, w, v, h in page.bars if chart.startswith("Server errors")}
    assert errors["after-1"][0] == 30.003 and errors["after-2"][0] == 24.002
    assert errors["after-1"][1] > 20 and errors["after-2"][1] > 20  # tall enough to see on the axis
    assert errors["before-1"][0] == 0 and errors["before-1"][1] > 0  # a zero is still drawn
    # the causal chain with its checkpoints
    roles = [role for role, _ in page.checkpoints]
    assert roles[0] == "cause" and roles[-1] == "impact"
    cause = [cells for role, cells in page.checkpoints if role == "cause"]
    assert cause[0][0] == 'http_requests_total{service="checkout",status="5xx"}'
    assert cause[0][1] == ">= 10 1/min"
    assert "cycle 1: 0 → 30.003" in cause[0][3] and "cycle 2: 0 → 24.002" in cause[0][3]


def test_page_shows_each_rule_against_its_threshold_and_the_chain(tmp_path):
    html = report(tmp_path).read_text()
    check_content(parse(html))
    assert "cause: checkout · source-file src/checkout/main.py" in html
    assert "impact: frontend · probe POST /checkout" in html


def test_rendered_page_holds_the_same_numbers_and_the_bars_are_seen(tmp_path):
    page = report(tmp_path)
    dom = browse(page, tmp_path, "--dump-dom")
    assert 'data-ready="yes"' in dom.stdout and "fk-js-error" not in dom.stdout, dom.stderr[-2000:]
    check_content(parse(dom.stdout))
    shot = tmp_path / "shot.png"
    browse(page, tmp_path, f"--screenshot={shot}")
    from PIL import Image

    with Image.open(shot) as im:
        rgb = im.convert("RGB")
        # the after windows' bars are the page's only large areas of the "after" red (#c53030)
        red = sum(n for n, c in (rgb.getcolors(maxcolors=1 << 24) or []) if c == (197, 48, 48))
    assert red > 1500, f"only {red} pixels of the after bars are visible"
