"""Stability before release: under rules v3 an entry is released only when a second verdict (another
window length or an independent run) holds too; admitted once and rejected the second time is flaky."""

from __future__ import annotations

import copy
import json
from typing import Any

from jsonschema import Draft202012Validator

from faultkit.catalog.model import entry_from_data
from faultkit.catalog.release import entry_digest
from faultkit.schema import schema_text
from faultkit.workspace import Workspace
from tests.factories import port_entry, write_entry
from tests.release.admit import START, make_bundle
from tests.release.admit import admit as admit_v2


def validated(ws: Workspace, n: int, second: str | None, first: str = "admitted") -> dict[str, Any]:
    """Entry `n` with a first verdict under rules v3 and, unless `second` is None, a second one
    (its own sealed, signed bundle at a 9 s window) recorded beside it as `validate --stability` does."""
    data = port_entry(n)
    folder, digest = make_bundle(ws, data, first, run="run-1", rules_version=3)
    v: dict[str, Any] = {"verdict": first, "bundle": folder, "bundle_digest": digest, "at": "2026-01-01T00:05:00Z",
                         "platform": "local", "entry_digest": entry_digest(entry_from_data(data)), "window_s": 6.0,
                         "repeat": 2}
    if second is not None:
        folder2, digest2 = make_bundle(ws, data, second, run="run-2", rules_version=3, start=START + 600, samples=9)
        v["stability"] = {"verdict": second, "bundle": folder2, "bundle_digest": digest2, "window_s": 9.0, "repeat": 2}
        if second != "admitted":
            v["verdict"] = "flaky"
            v["failed_rules"] = v["stability"]["failed_rules"] = ["probe-detects-fault", "screening"]
    data = copy.deepcopy(data)
    data["validation"] = v
    write_entry(ws, data)
    return data


def build(ws: Workspace, cli) -> dict[str, Any]:
    proc = cli("catalog", "build", "--version", "1.0.0", "--json", check=0)
    release = json.loads((ws.root / json.loads(proc.stdout)["path"]).read_text())
    Draft202012Validator(json.loads(schema_text("release"))).validate(release)
    return release


def test_admitted_once_and_rejected_at_the_second_window_is_left_out_as_flaky(ws, cli):
    validated(ws, 1, "admitted")
    validated(ws, 2, "rejected")
    validated(ws, 3, None)  # one verdict under v3: not enough
    admit_v2(ws, port_entry(4))  # sealed under v2, like the shipped bundles: one verdict, as before
    release = build(ws, cli)
    assert [e["id"] for e in release["entries"]] == ["ms-cart-port-1", "ms-cart-port-4"]
    out = {x["id"]: x for x in release["excluded"]}
    assert out["ms-cart-port-2"]["reason"] == "flaky"
    assert out["ms-cart-port-2"]["detail"] == (
        "flaky: admitted at 6s, rejected at 9s (evidence/ms-cart-port-2/run-2): probe-detects-fault, screening")
    assert out["ms-cart-port-3"]["reason"] == "single-verdict"
    assert "--stability" in out["ms-cart-port-3"]["detail"]
    # the release records both verdicts of what it admits
    entry = next(e for e in release["entries"] if e["id"] == "ms-cart-port-1")
    assert entry["validation"]["verdict"] == "admitted"
    assert entry["validation"]["stability"]["verdict"] == "admitted"
    assert entry["validation"]["stability"]["bundle_digest"] != entry["validation"]["bundle_digest"]


def test_a_second_verdict_is_checked_like_the_first(ws, cli):
    data = validated(ws, 1, "admitted")
    # a second verdict claimed admitted whose own bundle judges to a rejection stops the build
    folder2, digest2 = make_bundle(ws, port_entry(1), "rejected", run="run-3", rules_version=3, start=START + 900)
    data["validation"]["stability"].update(bundle=folder2, bundle_digest=digest2)
    write_entry(ws, data)
    proc = cli("catalog", "build", "--version", "1.0.0", check=1)
    assert "run-3" in proc.stderr and "not an admission" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    # one that names the first bundle is no second verdict at all
    data["validation"]["stability"].update(bundle=data["validation"]["bundle"],
                                           bundle_digest=data["validation"]["bundle_digest"])
    write_entry(ws, data)
    release = build(ws, cli)
    assert {x["id"]: x["reason"] for x in release["excluded"]} == {"ms-cart-port-1": "single-verdict"}
