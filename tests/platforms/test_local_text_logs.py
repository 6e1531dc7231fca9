"""A service that logs logback-style text lines has its ERROR lines counted (issue 30).

minishop with LOG_FORMAT=text in every manifest prints `2026-12-03 10:00:00.123 ERROR [Thread-3]
minishop.cart - cart store request failed: ...`, and a copy of its descriptor declares that shape in
`signals.logs`. A real config fault (cart's store port) is validated on the local platform under
rules v5: the after window's ERROR records are the text lines read by the pattern, so the
new-error-logs screen counts them and the fault's message is found; read as JSON lines (rules v4's
only reading) every one of them was INFO.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import yaml

from faultkit.apps.descriptor import load_app
from faultkit.observe.load import Limits
from faultkit.platforms.local import LocalPlatform
from faultkit.validators.params import ValidationParams
from faultkit.workspace import Workspace
from tests.helpers.minishop_signals import add_to_signals
from tests.helpers.retrying import validate
from tests.validators import shop

pytestmark = pytest.mark.live

LOGBACK = r"^\S+ \S+ (?P<level>[A-Z]+) \[(?P<thread>[^\]]*)\] (?P<logger>\S+) - (?P<message>.*)$"
# what is asserted is how the lines were read, which a busy machine does not change: its load is let be
# (four engineers share two cores here; load averages of 35 a core aborted every attempt)
PARAMS = ValidationParams(window_s=8, interval_s=1, repeat=1, rollout_timeout_s=60,
                          limits=Limits(max_load_per_core=1000, max_steal=100, max_lag_intervals=1000,
                                        max_uncovered_intervals=1000))


def text_logging(ws: Workspace) -> None:
    """Every container of the copy logs text lines, and the descriptor says how to read them."""
    for path in sorted((ws.apps_dir / "minishop" / "manifests").glob("*.yaml")):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        for doc in docs:
            if doc["kind"] == "Deployment":
                for container in doc["spec"]["template"]["spec"]["containers"]:
                    container.setdefault("env", []).append({"name": "LOG_FORMAT", "value": "text"})
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    logs = yaml.safe_dump({"logs": {"format": "text", "pattern": LOGBACK}})
    add_to_signals(ws, "".join(f"  {line}\n" for line in logs.splitlines()))


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, LocalPlatform]]:
    ws = shop.make_workspace(tmp_path_factory.mktemp("textshop"))
    text_logging(ws)
    assert load_app(ws, "minishop").log_format.format == "text"
    platform = LocalPlatform(ws, environ=shop.env_for(ws))
    platform.up("minishop", timeout=400)  # eleven services on a shared, busy machine
    try:
        yield ws, platform
    finally:
        platform.down()


def test_text_error_lines_are_counted_by_the_new_error_logs_screen(running):
    ws, platform = running
    verdict, folder = validate(ws, platform, shop.cart_store_port(ws), PARAMS)
    rules = {r["rule"]: r for r in verdict["rules"] if r.get("cycle") == 1}
    assert rules["screen-new-error-logs"]["passed"], rules["screen-new-error-logs"]
    assert "cart store request failed" in rules["screen-new-error-logs"]["detail"]
    assert rules["message-present-after"]["passed"], rules["message-present-after"]
    after = json.loads((folder / "windows" / "after-1.json").read_text())
    assert after["sources"]["logs"] == {"source": "files", "format": "text", "pattern": LOGBACK}
    assert after["sources"]["requests"]["kind"] == "scrape"
    failures = [r for r in after["logs"] if r["service"] == "cart" and r["level"] == "ERROR"]
    # the pattern took the date, level, thread and logger off: the message is the service's own
    assert failures and all(r["message"].startswith("cart store request failed: ") for r in failures)
    # what the services printed really was text, not JSON
    printed = [line.split(" ", 2)[2] for log in ws.state_dir.rglob("cart-*.log")
               for line in log.read_text().splitlines() if line.split(" ", 2)[1:2] == ["o"]]
    assert printed and not any(line.startswith("{") for line in printed)
