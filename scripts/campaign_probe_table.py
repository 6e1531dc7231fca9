"""Per fault of a finished campaign: its outcome, failed rules, runs, wall time, and what the symptom
probe measured in each counted cycle, as a Markdown table (the figures issue 21 asks for).

    python3 scripts/campaign_probe_table.py evidence/campaigns/minishop-<time>/

It reads only the campaign's summary.json and each fault's final bundle (verdict.json); the probe
columns are the probe rules' own measured values: `detects-fault` during the fault,
`healthy-before` in the before window, `recovery-healthy` late in the recovery window (failed /
judged attempts). Bundles judged under rules v2 have one probe per sample and show those counts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def probe_cells(verdict: dict) -> str:
    """`detects-fault 25/25 25/25; healthy-before 0/34 0/33; ...`: one value per counted cycle."""
    by_rule: dict[str, list[str]] = {}
    for rule in verdict["rules"]:
        if "probe" in rule["rule"] and rule.get("counted", True):
            measured = str(rule["measured"]).split(" (")[0].replace(" failed", "")
            by_rule.setdefault(rule["rule"].replace("probe-", ""), []).append(measured)
    return "; ".join(f"{name} {' '.join(values)}" for name, values in sorted(by_rule.items()))


def rows(campaign: Path) -> list[str]:
    summary = json.loads((campaign / "summary.json").read_text())
    out = ["| fault | mechanism | outcome | failed rules | runs | wall s | probe, per counted cycle |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for fault in summary["per_fault"]:
        bundle = fault.get("bundle")
        verdict = json.loads((campaign / bundle / "verdict.json").read_text()) if bundle else {"rules": [],
                                                                                              "failed_rules": []}
        out.append(f"| {fault['fault']} | {fault['mechanism']} | {fault['outcome']} | "
                   f"{','.join(verdict['failed_rules']) or '-'} | {len(fault['attempts'])} | "
                   f"{fault['wall_s']:.0f} | {probe_cells(verdict)} |")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("campaign", type=Path, help="a campaign folder (holding summary.json)")
    args = parser.parse_args()
    try:
        print("\n".join(rows(args.campaign)))
    except (OSError, ValueError, KeyError) as err:
        print(f"Error: {args.campaign}: not a finished campaign folder ({err}); give the folder "
              "`faultkit campaign run` reported", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
