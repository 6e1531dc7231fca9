"""bench/alerts_bench.py over real sealed bundles: the alerts each counted cycle raised, the time to
the first firing one, and the share of admitted bundles that page the agent."""

from __future__ import annotations

import subprocess
import sys

from tests.factories import port_entry
from tests.helpers.cli import REPO, cli_env
from tests.release.admit import make_bundle

BENCH = REPO / "bench" / "alerts_bench.py"


def test_it_reads_the_alerts_of_sealed_bundles_and_leaves_out_those_made_without(ws):
    paging = port_entry(1)
    make_bundle(ws, paging, alerts=True)
    make_bundle(ws, port_entry(2), status="rejected", alerts=True)
    make_bundle(ws, port_entry(3))  # no --alerts
    out = subprocess.run([sys.executable, str(BENCH), str(ws.evidence_dir)], capture_output=True, text=True,
                         cwd=ws.root, env=cli_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    raised = [ln for ln in lines if ln.startswith(paging["id"])]
    assert len(raised) == 2 and all("1 raised in 4 s: ServiceErrorRatioHigh{service_name=" in ln for ln in raised)
    assert "bundles with alerts: 2 (1 admitted); without: 1" in lines
    assert "admitted raising an alert in every counted cycle: 1/1 (100%)" in lines
    assert "after window start to first firing alert: median 4 s, max 4 s over 2 cycles" in lines
    assert any(ln.startswith("checkpoints by modality: ") and "metric" in ln for ln in lines)
