"""Labels of one admitting bundle: read it, derive, and spell the result in canonical bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.bundles import LABELS, dumps, read_json, read_object, read_verdict, verify_bundle
from faultkit.errors import InputError
from faultkit.labels.chain import causal_chain, observed_path, probe_route
from faultkit.labels.key_evidence import counted_cycles, key_evidence
from faultkit.observe.window import Window
from faultkit.validators import screening as sc
from faultkit.workspace import Workspace
from faultkit.yamlio import atomic_write

FORMAT = "faultkit/labels/v1"
# LABELS (labels.json) sits beside verdict.json, outside MANIFEST.json: derived, never sealed
__all__ = ["FORMAT", "LABELS", "derive", "label_bundle", "labels_text", "recompute", "write_beside"]


def derive(inputs: dict[str, Any], stages: dict[str, Any], windows: dict[str, Window],
           verdict: dict[str, Any], app: AppDescriptor, bundle_digest: str) -> dict[str, Any]:
    """The labels as data: a pure function of the bundle's files and the app's dependency graph."""
    entry = inputs["entry"]
    if verdict.get("status") != "admitted":
        raise InputError(f"{entry['id']}: the bundle's verdict is {verdict.get('status')!r}; only an admission "
                         "is labelled (what a rejected fault showed is not ground truth)")
    if app.version != inputs["app"].get("version"):
        raise InputError(f"{entry['id']}: the bundle was made on {app.name} {inputs['app'].get('version')}, the "
                         f"descriptor here is {app.version}; label it with that descriptor, or validate again")
    cycles = counted_cycles(stages, windows)
    # counted as the verdict counted them: a label never disagrees with it about what a window measured
    evidence = key_evidence(cycles, probe_route(entry), app.entry, sc.sealed_version(inputs),
                            sc.probed_service(entry))
    chain = causal_chain(entry, app, cycles, evidence)
    points = [c for step in chain for c in step["checkpoints"]]
    # the trace modality, and where the chain came from, only for bundles with spans: the labels of
    # every other bundle keep their bytes
    modalities = ("metric", "log", "event", "trace") if "traces" in evidence else ("metric", "log", "event")
    labels = {
        "schema": FORMAT,
        "fault": entry["id"],
        "bundle": bundle_digest,
        "cycles": [c.index for c in cycles],
        "evidence": evidence,
        "chain": chain,
        "counts": {
            "checkpoints": len(points),
            "by_modality": {k: sum(c["modality"] == k for c in points) for k in modalities},
        },
    }
    if "traces" in evidence:
        labels["chain_from"] = "traces" if observed_path(app, cycles, evidence) else "graph"
    return labels


def label_bundle(folder: Path, app: AppDescriptor) -> dict[str, Any]:
    """Verify the bundle's seal, then derive its labels from its files."""
    digest = verify_bundle(folder)
    inputs = read_object(folder, "inputs.json")
    stages = read_object(folder, "stages.json")
    cycles = stages.get("cycles", [])
    if not isinstance(cycles, list) or not all(isinstance(c, dict) for c in cycles):
        raise InputError(f"{folder / 'stages.json'}: cycles: expected a list of objects")
    names = sorted({str(c[k]) for c in cycles for k in ("before", "after") if c.get(k)})
    windows = {n: read_json(folder, f"windows/{n}.json") for n in names}
    return derive(inputs, stages, windows, read_verdict(folder), app, digest)


def labels_text(labels: dict[str, Any]) -> str:
    return dumps(labels)


def app_of(workspace: Workspace, folder: Path) -> AppDescriptor:
    return load_app(workspace, read_json(folder, "inputs.json")["app"]["name"])


def write_beside(workspace: Workspace, folder: Path) -> Path:
    """Derive an admission's labels and store them as labels.json beside its verdict."""
    path = folder / LABELS
    atomic_write(path, labels_text(label_bundle(folder, app_of(workspace, folder))))
    return path


def recompute(workspace: Workspace, folder: Path) -> tuple[str, bool | None]:
    """(recomputed labels.json text, whether the stored one is the same bytes; None when none is stored)."""
    text = labels_text(label_bundle(folder, app_of(workspace, folder)))
    stored = folder / LABELS
    if not stored.is_file():
        return text, None
    return text, stored.read_text("utf-8") == text
