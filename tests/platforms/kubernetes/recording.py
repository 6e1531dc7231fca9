"""Recording what the API server shows during a real rollout, for test_k8s_completion.py.

test_k8s_rollout.py watches a rollout of productcatalog; with FAULTKIT_RECORD_ROLLOUT=1 it writes
what it saw to recorded/: each distinct moment before the predicate said done (midway-NN.json) and
the completed rollout (complete.json). uids, names and digests are the cluster's own; managedFields
are dropped (they are long and the predicate does not read them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from faultkit.platforms.kubernetes.objects import Observed

OUT = Path(__file__).parent / "recorded"
KEEP = ("apiVersion", "kind", "spec", "status", "endpoints", "ports", "addressType")


def wanted() -> bool:
    return os.environ.get("FAULTKIT_RECORD_ROLLOUT") == "1"


def slim(o: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (o.get("metadata") or {}).items() if k != "managedFields"}
    return {**{k: o[k] for k in KEEP if k in o}, "metadata": meta}


def snapshot(o: Observed, container: str, image_ids: frozenset[str]) -> dict[str, Any]:
    return {"deployment": slim(o.deployment), "replicasets": [slim(r) for r in o.replicasets],
            "pods": [slim(p) for p in o.pods], "slices": [slim(s) for s in o.slices],
            "container": container, "image_ids": sorted(image_ids)}


def write(moments: list[dict[str, Any]], final: dict[str, Any]) -> None:
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    (OUT / "complete.json").write_text(json.dumps(final, indent=1, sort_keys=True, default=str) + "\n")
    for i, m in enumerate(moments):
        (OUT / f"midway-{i:02}.json").write_text(json.dumps(m, indent=1, sort_keys=True, default=str) + "\n")
