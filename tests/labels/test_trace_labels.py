"""The trace modality of labels (issue 31): operations whose spans moved as key evidence, and the
causal chain read from observed call paths, on windows built by hand as `validate --jaeger` stores
them. The live counterpart, a code fault in payment validated through the stack, is in
tests/telemetry/test_minishop_signals.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from faultkit.apps.descriptor import load_app
from faultkit.labels.chain import causal_chain
from faultkit.labels.checkpoints import holds
from faultkit.labels.key_evidence import Cycle, key_evidence, trace_evidence
from faultkit.observe.window import Window
from faultkit.report.verdict_view import chain_view
from tests.factories import port_entry
from tests.validators import windows as w

CHARGE = ["loadgenerator POST /checkout", "frontend POST /checkout", "checkout POST /checkout", "payment POST /charge"]
CALLS = (("frontend", "checkout"), ("checkout", "payment"), ("frontend", "cart"))


def op(service: str, operation: str, *, spans: int = 60, errors: int = 0, p95: float = 20.0,
       kind: str = "server") -> dict[str, Any]:
    return {"service": service, "operation": operation, "kind": kind, "spans": spans, "errors": errors,
            "p50_ms": p95 / 2, "p95_ms": p95, "max_ms": p95 * 2}


def traced(name: str, ops: list[dict[str, Any]], failing: Sequence[tuple[list[str], int]] = (),
           calls: tuple[tuple[str, str], ...] = CALLS) -> Window:
    summary: Any = {"traces": 60, "spans": sum(o["spans"] for o in ops), "error_spans": sum(o["errors"] for o in ops),
               "failing_traces": sum(n for _, n in failing), "operations": ops,
               "calls": [{"caller": a, "callee": b, "calls": 60, "errors": 0} for a, b in calls],
               "failing": [{"path": p, "traces": n} for p, n in failing]}
    return {**w.window(name, w.HEALTHY), "traces": summary}


HEALTHY_OPS = [op("frontend", "POST /checkout"), op("checkout", "POST /checkout"), op("payment", "POST /charge"),
               op("cart", "GET /cart")]


def charge_failing(index: int, traces: int, payment_p95: float = 20.0) -> Cycle:
    after = [op("frontend", "POST /checkout", errors=traces), op("checkout", "POST /checkout", errors=traces),
             op("payment", "POST /charge", errors=traces, p95=payment_p95), op("cart", "GET /cart")]
    return Cycle(index, traced(f"before-{index}", HEALTHY_OPS), traced(f"after-{index}", after, [(CHARGE, traces)]))


def entry(target: str) -> dict[str, Any]:
    data = port_entry(1)
    return {**data, "target": {**data["target"], "service": target}}


def test_windows_without_spans_give_no_trace_modality_and_the_chain_from_the_graph():
    plain = [Cycle(1, w.window("before-1", w.HEALTHY), w.window("after-1", w.FAILING))]
    assert trace_evidence(plain) is None and "traces" not in key_evidence(plain, "/", "frontend")
    unanswered = Cycle(1, traced("before-1", HEALTHY_OPS), {**w.window("after-1", w.FAILING),
                                                            "traces": {"error": "Jaeger did not answer"}})
    assert trace_evidence([unanswered]) is None  # one window without spans: no modality, not a partial one


def test_error_spans_of_a_service_read_up_to_jaegers_limit_are_not_evidence_but_its_latency_is():
    cycles = [charge_failing(1, 30, payment_p95=400.0), charge_failing(2, 24, payment_p95=400.0)]
    whole = {(o["metric"], o["service"]) for o in trace_evidence(cycles)["operations"]}
    assert {("error_spans", "payment"), ("span_p95_ms", "payment")} <= whole
    # payment's read hit the limit in one window: its error counts are floors, its latency a sample
    last = cycles[1]
    read_to_limit = {**last.after["traces"], "limited": ["payment"]}
    cycles[1] = Cycle(last.index, last.before, {**last.after, "traces": read_to_limit})
    floors = {(o["metric"], o["service"]) for o in trace_evidence(cycles)["operations"]}
    assert floors == whole - {("error_spans", "payment")}


def test_a_failing_path_makes_its_deepest_service_the_cause_and_its_callers_the_propagation(ws):
    cycles = [charge_failing(1, 30), charge_failing(2, 24)]
    evidence = key_evidence(cycles, "POST /checkout", "frontend")
    moved = {(o["metric"], o["service"]) for o in evidence["traces"]["operations"]}
    assert moved == {("error_spans", s) for s in ("frontend", "checkout", "payment")}  # cart's did not move
    assert evidence["traces"]["failing"] == [{"path": CHARGE, "cycles": [{"cycle": 1, "traces": 30},
                                                                         {"cycle": 2, "traces": 24}]}]
    chain = causal_chain(entry("payment"), load_app(ws, "minishop"), cycles, evidence)
    assert [(s["role"], s["service"]) for s in chain] == [("cause", "payment"), ("propagation", "checkout"),
                                                          ("impact", "frontend")]
    cause = chain[0]
    assert cause["path"] == CHARGE and "target" not in cause
    spans = {c["signal"]: c for c in cause["checkpoints"] if c["modality"] == "trace"}
    path = spans[f'failing_traces{{path="{" > ".join(CHARGE)}"}}']
    assert path["comparator"] == ">=" and path["value"] == 10 and path["unit"] == "traces"  # half of 24, rounded
    errors = spans['error_spans{service="payment",operation="POST /charge",kind="server"}']
    assert [o["after"] for o in errors["observed"]] == [30.0, 24.0]
    assert all(holds(c, o["after"]) and not holds(c, o["before"]) for c in spans.values() for o in c["observed"])
    page = chain_view({"chain": chain, "counts": {"checkpoints": 9}, "chain_from": "traces"})
    assert "read from observed call paths" in page and "<code>payment POST /charge</code>" in page


def test_a_failing_path_that_the_before_window_showed_too_is_background():
    cycles = [Cycle(1, traced("before-1", HEALTHY_OPS, [(CHARGE, 30)]), traced("after-1", HEALTHY_OPS, [(CHARGE, 30)]))]
    assert trace_evidence(cycles) == {"operations": [], "failing": []}


def test_without_failing_requests_the_deepest_slowed_service_on_observed_calls_is_the_cause(ws):
    slow = [op("frontend", "POST /checkout", p95=900.0), op("checkout", "POST /checkout", p95=880.0),
            op("checkout", "POST", kind="client", p95=870.0), op("payment", "POST /charge", p95=850.0),
            op("cart", "GET /cart")]
    cycles = [Cycle(i, traced(f"before-{i}", HEALTHY_OPS), traced(f"after-{i}", slow)) for i in (1, 2)]
    evidence = key_evidence(cycles, "POST /checkout", "frontend")
    assert evidence["traces"]["failing"] == []
    assert ("span_p95_ms", "payment", "up") in {(o["metric"], o["service"], o["direction"])
                                               for o in evidence["traces"]["operations"]}
    chain = causal_chain(entry("payment"), load_app(ws, "minishop"), cycles, evidence)
    assert [(s["role"], s["service"]) for s in chain] == [("cause", "payment"), ("propagation", "checkout"),
                                                          ("impact", "frontend")]
    latency = [c for c in chain[0]["checkpoints"] if c["signal"].startswith("span_p95_ms")]
    assert latency and latency[0]["value"] == 400 and latency[0]["unit"] == "ms"  # half of 850, rounded down
    assert "path" not in chain[0]


def test_a_target_that_emits_no_spans_is_seen_at_its_client_and_the_cause_names_it(ws):
    store = ["loadgenerator GET /cart", "frontend GET /cart", "cart GET /cart"]
    after = [op("frontend", "GET /cart", errors=20), op("cart", "GET /cart", errors=20)]
    cycles = [Cycle(1, traced("before-1", HEALTHY_OPS), traced("after-1", after, [(store, 20)]))]
    evidence = key_evidence(cycles, "GET /cart", "frontend")
    cause = causal_chain(entry("cartstore"), load_app(ws, "minishop"), cycles, evidence)[0]
    assert (cause["service"], cause["target"], cause["artifact"]["kind"]) == ("cart", "cartstore", "manifest-field")
