"""A bundle whose files are sealed but not shaped as validate writes them: labels refuse it in one
line naming the file, from `catalog lint` (its declared-evidence rule labels the admitting bundle)."""

from __future__ import annotations

from faultkit.evidence import BundleWriter
from tests.factories import port_entry
from tests.release.admit import admit


def test_stages_that_are_not_an_object_are_one_line_from_lint(ws, cli):
    admit(ws, port_entry(1))
    bundle = ws.evidence_dir / "ms-cart-port-1" / "run-1"
    (bundle / "stages.json").write_text("[]\n")
    BundleWriter(bundle).seal()
    proc = cli("catalog", "lint", "--no-cache")
    assert "unexpected" not in proc.stderr
    assert "stages.json: expected a JSON object, found list" in proc.stdout + proc.stderr


def test_cycles_that_are_not_objects_are_one_line_from_lint(ws, cli):
    admit(ws, port_entry(1))
    bundle = ws.evidence_dir / "ms-cart-port-1" / "run-1"
    (bundle / "stages.json").write_text('{"cycles": [1, 2]}\n')
    BundleWriter(bundle).seal()
    proc = cli("catalog", "lint", "--no-cache")
    assert "unexpected" not in proc.stderr
    assert "stages.json: cycles: expected a list of objects" in proc.stdout + proc.stderr
