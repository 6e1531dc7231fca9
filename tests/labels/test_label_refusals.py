"""A bundle whose files are sealed but not shaped as validate writes them: labels refuse it in one
line naming the file, from `catalog lint` (its declared-evidence rule labels the admitting bundle)."""

from __future__ import annotations

import pytest

from faultkit.bundles import BundleWriter
from tests.factories import port_entry
from tests.release.admit import admit


@pytest.mark.parametrize(("stages", "refusal"), [
    ("[]\n", "stages.json: expected a JSON object, found list"),
    ('{"cycles": [1, 2]}\n', "stages.json: cycles: expected a list of objects"),
])
def test_stages_not_shaped_as_validate_writes_them_are_one_line_from_lint(ws, cli, stages, refusal):
    admit(ws, port_entry(1))
    bundle = ws.evidence_dir / "ms-cart-port-1" / "run-1"
    (bundle / "stages.json").write_text(stages)
    BundleWriter(bundle).seal()
    proc = cli("catalog", "lint", "--no-cache")
    assert "unexpected" not in proc.stderr
    assert refusal in proc.stdout + proc.stderr
