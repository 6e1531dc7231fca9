"""Record what the API server shows during a real rollout, for test_k8s_completion.py.

Run by hand against a namespace where minishop is up (`faultkit up --platform kubernetes`):
    python3 tests/platforms/kubernetes/record_rollout.py STATE_DIR BUILD_ID
It rolls productcatalog out to BUILD_ID and writes recorded/midway-*.json (moments before the
predicate said done) and recorded/complete.json; uids, names and digests are the cluster's own.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from k8s_support import REPO

from faultkit.platforms.kubernetes import KubernetesPlatform, objects
from faultkit.platforms.kubernetes.completion import rollout_progress
from faultkit.workspace import Workspace

OUT = Path(__file__).parent / "recorded"
KEEP = ("metadata", "spec", "status", "endpoints", "ports", "addressType")


def slim(o: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in o.get("metadata", {}).items() if k != "managedFields"}
    return {**{k: o[k] for k in KEEP if k in o and k != "metadata"}, "metadata": meta}


def main(state: str, build_id: str) -> None:
    p = KubernetesPlatform(Workspace(REPO, Path(state)))
    ns = p.record().namespace
    location = p.cluster_images.location_of(build_id)
    assert location, f"{build_id}: not a build this platform knows"
    ids = sorted(p.cluster_images.digests(location))
    moments: list[dict[str, Any]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            o = objects.observe(p.conn, ns, "productcatalog")
            prog = rollout_progress(o.deployment, o.replicasets, o.pods, o.slices, "productcatalog", frozenset(ids))
            rec = {"deployment": slim(o.deployment), "replicasets": [slim(r) for r in o.replicasets],
                   "pods": [slim(x) for x in o.pods], "slices": [slim(s) for s in o.slices],
                   "container": "productcatalog", "image_ids": ids, "progress": asdict(prog)}
            if not prog.done and (not moments or moments[-1]["progress"] != rec["progress"]):
                moments.append(rec)
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    p.rollout("productcatalog", build_id, timeout=120)
    stop.set()
    t.join()
    o = objects.observe(p.conn, ns, "productcatalog")
    final = {"deployment": slim(o.deployment), "replicasets": [slim(r) for r in o.replicasets],
             "pods": [slim(x) for x in o.pods], "slices": [slim(s) for s in o.slices],
             "container": "productcatalog", "image_ids": ids}
    OUT.mkdir(exist_ok=True)
    (OUT / "complete.json").write_text(json.dumps(final, indent=1, sort_keys=True, default=str) + "\n")
    for i, m in enumerate(moments):
        m.pop("progress")
        (OUT / f"midway-{i:02}.json").write_text(json.dumps(m, indent=1, sort_keys=True, default=str) + "\n")
    print(f"recorded {len(moments)} moments before completion, and the completed rollout")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
