"""Figures of what the agent would be paged with, from sealed bundles made with `--alerts` (issue 31).

For every bundle under the folders given (a campaign's folder, or bundles anywhere), read as `judge`
reads them (the seal is checked first): its fault and verdict; per counted cycle, the alerts of the
pack raised (firing in the after window, not in the before window) and the seconds from the after
window's start (the change checked in place) to the first sample that saw one of them firing. Then,
over the admitted bundles: the share that raised at least one alert, the median and largest time
to a first firing alert, and the modality mix of their labels' checkpoints (metric, log, event,
trace). Bundles made without `--alerts` are counted and left out of the figures.
Usage: python bench/alerts_bench.py FOLDER [FOLDER ...]
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from faultkit.bundles import read_json, read_object, read_verdict, verify_bundle
from faultkit.errors import FaultkitError
from faultkit.labels.core import app_of, label_bundle
from faultkit.validators.alert_rule import alert_name, raised
from faultkit.workspace import Workspace


def bundles(folders: list[Path]) -> list[Path]:
    found = {p.parent for f in folders for p in f.rglob("verdict.json") if (p.parent / "stages.json").is_file()}
    return sorted(found)


def cycle_figures(folder: Path) -> list[tuple[int, list[str], float | None]]:
    """(cycle, alerts raised, seconds from the after window's start to the first of them firing) per
    counted cycle; None for a bundle whose windows recorded no alerts."""
    out = []
    for c in read_object(folder, "stages.json").get("cycles", []):
        if not c.get("counted") or not c.get("after"):
            continue
        before = read_json(folder, f"windows/{c['before']}.json")
        after = read_json(folder, f"windows/{c['after']}.json")
        if "alerts" not in before or "alerts" not in after:
            return []
        names = raised(before, after)
        firing = [a["firing_seen"] - after["start"] for a in after["alerts"]["alerts"]
                  if "firing_seen" in a and alert_name(a) in names]
        out.append((c["index"], names, round(min(firing), 1) if firing else None))
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    ws = Workspace.find()
    rows: list[dict[str, Any]] = []
    without = 0
    for folder in bundles([Path(a) for a in argv]):
        try:
            verify_bundle(folder)
            status = read_verdict(folder).get("status", "?")
            fault = read_object(folder, "inputs.json")["entry"]["id"]
            cycles = cycle_figures(folder)
            if not cycles:
                without += 1
                continue
            by_modality = (label_bundle(folder, app_of(ws, folder))["counts"]["by_modality"] if status == "admitted"
                           else {})
        except FaultkitError as e:
            print(f"{folder}: {e}", file=sys.stderr)
            continue
        rows.append({"fault": fault, "status": status, "cycles": cycles, "mix": by_modality})
        for index, names, first in cycles:
            print(f"{fault:58} {status:9} cycle {index}: {len(names)} raised"
                  f"{' in ' + format(first, 'g') + ' s' if first is not None else ''}: {', '.join(names) or '-'}")
    admitted = [r for r in rows if r["status"] == "admitted"]
    paging = [r for r in admitted if all(names for _, names, _ in r["cycles"])]
    firsts = [first for r in admitted for _, _, first in r["cycles"] if first is not None]
    mix: Counter[str] = Counter()
    for r in admitted:
        mix.update(r["mix"])
    print(f"\nbundles with alerts: {len(rows)} ({len(admitted)} admitted); without: {without}")
    if admitted:
        print(f"admitted raising an alert in every counted cycle: {len(paging)}/{len(admitted)} "
              f"({len(paging) / len(admitted):.0%})")
    if firsts:
        print(f"after window start to first firing alert: median {statistics.median(firsts):g} s, "
              f"max {max(firsts):g} s over {len(firsts)} cycles")
    if mix:
        total = sum(mix.values())
        print("checkpoints by modality: " + ", ".join(f"{k} {v} ({v / total:.0%})" for k, v in sorted(mix.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
