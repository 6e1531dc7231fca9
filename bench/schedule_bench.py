"""Calibrate the main schedule against the reference runs, and time an export.

Builds a synthetic 240-entry catalog (three apps of 80 entries, sized like Online Boutique,
Astronomy Shop and Train Ticket), draws the main schedule for 100 seeds per app, and prints mean
and peak concurrency beside the reference (SPEC.md section 4: mean 5.8 to 6.5, peak 10 to 11) and
the category mix's error against the renormalised shares. Then times `schedule export` on a
700-entry release (target: under 0.5 s).

Run: python bench/schedule_bench.py [--seeds 100]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from faultkit.schedules import document, synthetic
from faultkit.schedules.params import preset
from faultkit.schedules.sources import Source, load_release

# name, services, categories (Online Boutique has no authentication faults), reference mean, peak
APPS = [
    ("boutique", 11, synthetic.tuple_without("authentication"), 5.8, 10),
    ("astronomy", 20, synthetic.ALL, 6.5, 11),
    ("trainticket", 41, synthetic.ALL, 6.1, 11),
]


def calibrate(seeds: int) -> None:
    entries = [e for name, n, cats, _, _ in APPS for e in synthetic.entries(name, n, 80, cats)]
    release = synthetic.release("bench", entries)
    source = Source("bench", release["digest"], tuple(entries), "bench")
    params = preset("main")
    print(f"main schedule, {seeds} seeds per app, synthetic catalog of {len(entries)} entries")
    print(f"{'app':<12} {'faults':>7} {'skipped':>8} {'mean active':>12} {'ref':>5} "
          f"{'peak (mean, range)':>20} {'ref':>4} {'mix MAE pp':>11} {'pooled':>7}")
    for name, _, _, ref_mean, ref_peak in APPS:
        docs = [document.build(source, name, params, seed) for seed in range(seeds)]
        stats = [d["stats"] for d in docs]
        peaks = [s["peak_active"] for s in stats]
        print(f"{name:<12} {statistics.mean(s['injected'] for s in stats):>7.1f} "
              f"{statistics.mean(s['skipped_draws'] for s in stats):>8.2f} "
              f"{statistics.mean(s['mean_active'] for s in stats):>12.2f} {ref_mean:>5} "
              f"{statistics.mean(peaks):>9.1f} ({min(peaks)}-{max(peaks)}) {ref_peak:>9} "
              f"{statistics.mean(map(_mae, stats)):>11.2f} {_pooled_mae(stats):>7.2f}")


def _mae(stats: dict) -> float:
    """Mean absolute error, in percentage points, of one schedule's mix against its targets."""
    total = stats["injected"] or 1
    targets = stats["target_shares"]
    return 100 * statistics.mean(abs(stats["category_counts"].get(c, 0) / total - s)
                                 for c, s in targets.items())


def _pooled_mae(stats: list[dict]) -> float:
    """The same over all seeds' faults pooled: how well the draw follows the shares."""
    counts: Counter[str] = Counter()
    for s in stats:
        counts.update(s["category_counts"])
    total = sum(counts.values())
    targets = stats[0]["target_shares"]
    return 100 * statistics.mean(abs(counts[c] / total - s) for c, s in targets.items())


def time_export(entries_count: int = 700, repeats: int = 5) -> None:
    per_app = entries_count // 3
    sizes = [per_app, per_app, entries_count - 2 * per_app]
    entries = [e for (name, n, cats, _, _), k in zip(APPS, sizes, strict=True)
               for e in synthetic.entries(name, n, k, cats)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "catalog-bench.json"
        path.write_text(json.dumps(synthetic.release("bench", entries)), "utf-8")
        times = []
        for seed in range(repeats):
            start = time.perf_counter()
            doc = document.build(load_release(path), "trainticket", preset("main"), seed)
            document.write(doc, Path(tmp) / "out.json")
            times.append(time.perf_counter() - start)
    print(f"export from a {len(entries)}-entry release (read, draw, write): "
          f"best {min(times):.3f} s, median {statistics.median(times):.3f} s (target < 0.5 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    args = parser.parse_args()
    calibrate(args.seeds)
    time_export()


if __name__ == "__main__":
    main()
