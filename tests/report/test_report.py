"""`faultkit report`: a self-contained page, rendered in headless Chromium.

Chromium comes from Debian's `chromium` package (`apt-get install -y chromium`; CI installs it).
Without it these tests fail, unless FAULTKIT_ALLOW_NO_BROWSER=1 is set, which turns the browser
tests into skips with that reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from tests.factories import entry_data, write_entry
from tests.release.admit import admit


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found:
        return found
    if os.environ.get("FAULTKIT_ALLOW_NO_BROWSER") == "1":
        pytest.skip("no chromium on PATH and FAULTKIT_ALLOW_NO_BROWSER=1 (apt-get install -y chromium)")
    pytest.fail(
        "chromium is not installed (apt-get install -y chromium); "
        "set FAULTKIT_ALLOW_NO_BROWSER=1 to skip the browser tests deliberately"
    )


def browse(page: Path, tmp: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    cmd = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp / 'profile'}",
        "--window-size=1280,4000",  # the coverage tables of every app come first
        "--enable-logging=stderr",
        "--v=0",
        *mode,
        page.as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def png_colours(path: Path) -> int:
    """How many distinct colours the screenshot holds (Pillow when present, else raw bytes)."""
    try:
        from PIL import Image
    except ImportError:
        data = path.read_bytes()
        idat = b"".join(
            data[m.end() : m.end() + int.from_bytes(data[m.start() - 4 : m.start()], "big")]
            for m in re.finditer(b"IDAT", data)
        )
        return len(set(zlib.decompress(idat)))
    with Image.open(path) as im:
        return len(im.convert("RGB").getcolors(maxcolors=1 << 24) or ())


@pytest.fixture
def catalog(ws):
    admit(ws, entry_data())
    admit(
        ws,
        entry_data(
            id="ms-cart-port-2",
            category="configuration-bug",
            config={**entry_data()["config"], "new": "cartstore:6390"},
        ),
        status="rejected",
    )
    write_entry(ws, entry_data(id="ms-cart-port-3", config={**entry_data()["config"], "new": "cartstore:6391"}))
    return ws


def test_report_content(catalog, cli):
    cli("report", "--out", "r.html", check=0)
    html = (catalog.root / "r.html").read_text()
    assert (
        "<link" not in html and "src=" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    )
    assert "Coverage: services by category" in html and "1 / 2" in html  # cart, dependency: 1 admitted of 2
    assert "screen-server-errors: measured 0.0, threshold 4.0" in html  # the rejection's failing rule
    assert "Evidence: ms-cart-port-2" in html and "threshold 4" in html and "threshold 10" in html
    # category mix, two screening bar charts (admit's bundles are in the validator's format), three window charts
    assert html.count("<svg") == 6


def test_unknown_fault_is_a_usage_error(catalog, cli):
    proc = cli("report", "--fault", "nope", check=2)
    assert "--fault 'nope'" in proc.stderr


def test_report_renders_in_chromium_without_errors(catalog, cli, tmp_path):
    page = tmp_path / "report.html"
    cli("report", "--out", str(page), "--fault", "ms-cart-store-port", check=0)
    shot = tmp_path / "shot.png"
    proc = browse(page, tmp_path, f"--screenshot={shot}")
    assert shot.is_file(), proc.stderr[-2000:]
    assert png_colours(shot) > 20, "the screenshot is (nearly) blank"
    dom = browse(page, tmp_path, "--dump-dom")
    assert 'data-ready="yes"' in dom.stdout, dom.stderr[-2000:]
    assert 'data-charts="6"' in dom.stdout
    assert "fk-js-error" not in dom.stdout
    console_errors = [line for line in dom.stderr.splitlines() if "CONSOLE" in line and "ERROR" in line.upper()]
    assert console_errors == []


def test_error_marker_does_detect_a_broken_page(catalog, cli, tmp_path):
    """The guard is real: a page that throws shows the marker in the DOM."""
    page = tmp_path / "report.html"
    cli("report", "--out", str(page), check=0)
    page.write_text(page.read_text().replace("</body>", "<script>undefinedFunction()</script></body>"))
    dom = browse(page, tmp_path, "--dump-dom")
    assert "fk-js-error" in dom.stdout
