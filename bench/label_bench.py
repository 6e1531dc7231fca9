"""Label figures over the shipped minishop catalog, beside the RCA100 seed's 6.42 checkpoints per case.

Labels every admitted fault from its bundle (in process, as `faultkit label --all` does), then prints
the checkpoints per fault (mean, min, max), per mechanism, the modality mix of the checkpoints and of
the key evidence, the chain shapes, and the time to label the whole catalog (best of --runs).
Usage: python bench/label_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from faultkit.labels.catalog_io import admitted_entries, label_fault  # noqa: E402
from faultkit.workspace import Workspace  # noqa: E402

SEED_PER_CASE = 6.42  # RCA100: 661 checkpoints over 103 cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    ws = Workspace(root=REPO, state_dir=REPO / ".faultkit")
    times, labelled = [], []
    for _ in range(args.runs):
        start = time.perf_counter()
        entries = admitted_entries(ws)
        labelled = [(e, label_fault(ws, e).labels) for e in entries]
        times.append(time.perf_counter() - start)
    counts = [lab["counts"]["checkpoints"] for _, lab in labelled]
    by_modality: Counter[str] = Counter()
    for _, lab in labelled:
        by_modality.update(lab["counts"]["by_modality"])
    evidence = Counter({k: sum(len(lab["evidence"][k]) for _, lab in labelled) for k in ("metrics", "logs", "events")})
    shapes = Counter(len(lab["chain"]) for _, lab in labelled)
    total = sum(counts) or 1
    print(f"faults labelled: {len(labelled)}")
    print(f"checkpoints per fault: mean {statistics.fmean(counts):.2f}, min {min(counts)}, max {max(counts)} "
          f"(seed RCA100: {SEED_PER_CASE} per case); total {sum(counts)}")
    for mech in ("code", "config", "direct"):
        some = [lab["counts"]["checkpoints"] for e, lab in labelled if e.mechanism == mech]
        if some:
            print(f"  {mech}: {len(some)} faults, mean {statistics.fmean(some):.2f}")
    print("checkpoint modality mix: " + ", ".join(f"{k} {n} ({100 * n / total:.1f}%)"
                                                   for k, n in sorted(by_modality.items())))
    print("key evidence items: " + ", ".join(f"{k} {n}" for k, n in evidence.items()))
    print(f"faults with an event checkpoint: {sum(1 for _, lab in labelled if lab['counts']['by_modality']['event'])}")
    print("chain steps: " + ", ".join(f"{n} steps: {c} faults" for n, c in sorted(shapes.items())))
    print(f"label time, whole catalog: best {min(times):.2f} s, median {statistics.median(times):.2f} s "
          f"over {args.runs} runs ({1000 * min(times) / max(1, len(labelled)):.0f} ms per fault)")


if __name__ == "__main__":
    main()
