"""`validate --jaeger`: every window records its spans, read in the background once they are in, and
the verdict is judged as without them. On the fake platform and a fake Jaeger on a real socket; the
real stack with minishop is tests/telemetry/test_minishop_signals.py."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from faultkit.errors import UsageError
from faultkit.observe.load import Limits
from faultkit.observe.trace_reader import LAG_S, UNREAD
from faultkit.validators.params import ValidationParams
from faultkit.validators.pipeline import validate
from faultkit.validators.signals import Interrupted
from faultkit.workspace import Workspace
from tests.fakes.behaviour import Behaviour, Setting
from tests.fakes.jaeger import FakeJaeger
from tests.fakes.platform import FakePlatform
from tests.helpers import retrying
from tests.helpers.cli import run_cli
from tests.validators import shop

WRONG_PORT = Setting("cart", "cart", "env.CARTSTORE_ADDR")
BEHAVIOURS = [Behaviour(WRONG_PORT, "cart", errors=1.0, log="cart store request failed"),
              Behaviour(WRONG_PORT, "frontend", errors=1.0, path="/cart")]
WINDOWS = {f"{phase}-{cycle}" for cycle in (0, 1) for phase in ("before", "after", "recovery")}


@pytest.fixture
def running(tmp_path) -> Iterator[tuple[Workspace, FakePlatform]]:
    ws = shop.make_workspace(tmp_path / "shop")
    platform = FakePlatform(ws, behaviours=BEHAVIOURS)
    platform.up("minishop")
    yield ws, platform
    platform.down()


@pytest.fixture
def jaeger() -> Iterator[FakeJaeger]:
    fake = FakeJaeger()
    yield fake
    fake.close()


def params(jaeger: str = "") -> ValidationParams:
    return ValidationParams(window_s=2, interval_s=0.5, repeat=1, limits=Limits(max_load_per_core=1000), jaeger=jaeger)


def test_each_window_records_its_spans_read_after_the_lag_without_stretching_the_run(running, jaeger):
    ws, platform = running
    verdict, folder = retrying.validate(ws, platform, shop.cart_store_port(ws), params(jaeger.url), record=False)
    assert verdict["status"] in ("admitted", "rejected"), verdict["summary"]  # a verdict, whichever
    windows = {w.stem: json.loads(w.read_text()) for w in (folder / "windows").glob("*.json")}
    assert set(windows) == WINDOWS
    for name, window in windows.items():
        traces = window["traces"]
        assert (traces["traces"], traces["spans"], traces["failing"]) == (1, 3, []), name
        calls = [f"{c['caller']}->{c['callee']}" for c in traces["calls"]]
        assert calls == ["frontend->cart", "loadgenerator->frontend"]
        # read once its spans had time to arrive, for the window's own time range
        came, query = next((t, q) for t, q in jaeger.queries if int(q["start"]) == int(window["start"] * 1e6))
        assert came >= window["end"] + LAG_S and int(query["end"]) == int(window["end"] * 1e6)
    # in the background: the first window was read while the run went on, not after it
    first = min(t for t, _ in jaeger.queries)
    assert first < windows["recovery-1"]["start"]
    judged = json.loads(run_cli("judge", str(folder), "--json", cwd=ws.root, check=0).stdout)
    assert judged["matches_recorded"]


def test_a_jaeger_that_does_not_answer_leaves_a_line_in_each_window(running, jaeger):
    ws, platform = running
    url = jaeger.url
    jaeger.close()
    verdict, folder = retrying.validate(ws, platform, shop.cart_store_port(ws), params(url), record=False)
    assert verdict["status"] in ("admitted", "rejected"), verdict["summary"]
    for window in (folder / "windows").glob("*.json"):
        assert json.loads(window.read_text())["traces"] == {
            "error": f"Jaeger at {url} did not answer /api/services (ConnectionError)"}, window.name


def test_a_run_cut_short_records_the_spans_it_did_not_wait_for(running, jaeger, tmp_path):
    ws, platform = running
    with pytest.raises(Interrupted):  # the overall timeout, inside the first after window
        validate(ws, platform, shop.cart_store_port(ws), params(jaeger.url), evidence=tmp_path / "ev", record=False,
                 timeout_s=3.5)
    [folder] = (tmp_path / "ev").iterdir()
    before = json.loads((folder / "windows" / "before-0.json").read_text())
    assert before["traces"] == {"error": UNREAD} and jaeger.queries == []


def test_a_run_given_no_jaeger_has_windows_without_traces(running):
    ws, platform = running
    _, folder = retrying.validate(ws, platform, shop.cart_store_port(ws), params(), record=False)
    assert not any("traces" in json.loads(w.read_text()) for w in (folder / "windows").glob("*.json"))


def test_a_jaeger_in_a_cluster_is_refused_in_one_line_where_no_platform_reaches_it(cli, running):
    proc = cli("validate", "--fault", "t-any", "--jaeger", "k8s://monitoring/jaeger")
    assert proc.returncode == 2
    assert [line for line in proc.stderr.splitlines() if "k8s://" in line] == [
        "Error: --jaeger k8s://monitoring/jaeger: expected k8s://NAMESPACE/SERVICE:PORT"]
    params("k8s://monitoring/jaeger:16686").check()  # a Service's URL is for the platform to reach
    ws, platform = running
    with pytest.raises(UsageError, match=r"^--jaeger 'k8s://monitoring/jaeger:16686': names a Service in a cluster, "
                                         "which the fake platform cannot reach"):
        validate(ws, platform, shop.cart_store_port(ws), params("k8s://monitoring/jaeger:16686"), record=False)
    assert not ws.evidence_dir.exists() or not any(ws.evidence_dir.iterdir())  # refused before a bundle was begun
