"""`faultkit catalog export --format incident-records`: records from entries and evidence, with
summaries that do not give the root cause away."""

from __future__ import annotations

import json
import re

from faultkit.apps.descriptor import load_app
from tests.factories import cart_prefix_entry, entry_data, write_entry
from tests.release.admit import admit

PATCH = (
    "--- a/src/cart/main.py\n+++ b/src/cart/main.py\n@@ -11,2 +11,3 @@\n"
    ' SERVICE = "cart"\n MAX_QUANTITY = 999\n+_PREFIX = "cart-v2:"\n'
)


def forbidden(data: dict, ws) -> list[str]:
    """Written independently of the exporter: what a summary must never contain."""
    spec = load_app(ws, data["app"]).service(data["target"]["service"])
    words = [data["artifact"]["ref"], *data["artifact"].get("aliases", []), spec.name, *spec.aliases]
    if data.get("config"):
        c = data["config"]
        words += [c["field"], c["field"].split(".")[-1], c["old"], c["new"]]
    if data.get("code"):
        words += [data["code"]["patch"], data["code"]["patch"].rsplit("/", 1)[-1], data["code"]["marker"]]
    words += [data["mechanism"], "patch", "manifest"]
    return [w for w in words if w]


def assert_no_leak(text: str, words: list[str]) -> None:
    for w in words:
        assert not re.search(rf"\b{re.escape(w)}\b", text, re.I), f"{w!r} leaks into: {text}"


def test_records_for_admitted_faults_only_and_without_leakage(ws, cli):
    config = admit(ws, entry_data())
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(PATCH)
    code = cart_prefix_entry(probe={"service": "frontend", "method": "POST", "path": "/checkout", "expect_status": 200})
    code = admit(ws, code)
    write_entry(ws, entry_data(id="ms-not-validated", config={**config["config"], "new": "cartstore:6399"}))

    out = ws.root / "dist" / "incidents.json"
    cli("catalog", "export", "--format", "incident-records", "--out", str(out), check=0)
    doc = json.loads(out.read_text())
    records = {r["fault"]: r for r in doc["records"]}
    assert sorted(records) == ["ms-cart-prefix", "ms-cart-store-port"]
    for data in (config, code):
        r = records[data["id"]]
        assert set(r) >= {"title", "summary", "impact", "root_cause", "mitigation", "timeline"}
        for key in ("title", "summary", "impact"):
            assert_no_leak(r[key], forbidden(data, ws))
        # measured values from the evidence: 0 -> 600 errors/min (admit's windows: 10 5xx a second when sick)
        assert "from 0.0 to 600.0 per minute" in r["summary"], r["summary"]
        assert "2026-01-01T00:00:10Z" in r["summary"]
        assert r["timeline"][0] == {
            "at": "2026-01-01T00:00:00Z",
            "event": "Baseline: 0.0 server errors/min, 6000 requests/min.",
        }
    # the root cause does name what the summary may not
    assert "env.CARTSTORE_ADDR" in records["ms-cart-store-port"]["root_cause"]
    assert "'cartstore:6380'" in records["ms-cart-store-port"]["root_cause"]
    assert "old keys are not migrated" in records["ms-cart-prefix"]["root_cause"]
    assert "POST /checkout" in records["ms-cart-prefix"]["summary"]  # a path that reveals nothing
    assert "/cart" not in records["ms-cart-store-port"]["summary"]  # the probe path names the service


def test_export_to_stdout_is_deterministic(ws, cli):
    admit(ws, entry_data())
    first = cli("catalog", "export", check=0).stdout
    assert first == cli("catalog", "export", check=0).stdout
    assert json.loads(first)["format"] == "faultkit/incident-records/v1"


def test_an_entry_without_evidence_is_not_exported(ws, cli):
    admit(ws, entry_data(), bundle=False)
    assert json.loads(cli("catalog", "export", check=0).stdout)["records"] == []
