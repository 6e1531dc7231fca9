"""Gather a campaign's bundles from elsewhere (a Job's evidence volume, copied out) and record
their verdicts in the entries here.

Each campaign folder under the source (a `share-<k>/` per Job index, or one folder) is read from its
plan and fault states. A verdict is recorded only when its bundle verifies against its manifest,
judges again to the recorded verdict byte for byte, is signed by a trusted validator key, and was
made on the entry as it is now (the bundle's entry digest): a stale, tampered or untrusted bundle
is reported, never recorded. Bundles are copied
into the workspace first, so the entries name files the repository holds.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from faultkit.bundles import check_trusted, sha256_file
from faultkit.campaigns.plan import PLAN, Plan
from faultkit.campaigns.state import VERDICTS, FaultStore
from faultkit.catalog.writeback import record_validation, validation_block
from faultkit.errors import FaultkitError, InputError
from faultkit.keys import trusted_or_own
from faultkit.validators.faults import load_fault
from faultkit.validators.judge import verify_and_judge
from faultkit.workspace import Workspace


@dataclass(frozen=True)
class Collected:
    fault: str
    outcome: str
    bundle: str | None  # where it now is, relative to the workspace
    detail: str


def campaign_folders(source: Path) -> list[Path]:
    if (source / PLAN).is_file():
        return [source]
    found = sorted(p.parent for p in source.glob(f"*/{PLAN}"))
    if not found:
        raise InputError(f"{source}: no campaign here (no {PLAN}, nor in any folder below it); point at the "
                         "folder copied from the evidence volume")
    return found


def collect(ws: Workspace, source: Path, into: Path, trust: tuple[Path, ...] = ()) -> list[Collected]:
    trusted = trusted_or_own(ws.root, trust)
    out: list[Collected] = []
    for folder in campaign_folders(source):
        plan = Plan.read(folder)
        for s in FaultStore(folder).all(tuple(f.id for f in plan.faults)):
            if s.state != "done" or s.outcome not in VERDICTS or not s.bundle:
                out.append(Collected(s.id, s.outcome or s.state, None, "no verdict to record"))
                continue
            out.append(_one(ws, plan, folder / s.bundle, into, s.id, trusted))
    return out


def _one(ws: Workspace, plan: Plan, bundle: Path, into: Path, fault_id: str, trusted: frozenset[str]) -> Collected:
    try:
        verdict, same = verify_and_judge(bundle)
        check_trusted(bundle, trusted)  # the pods sign with their own key: pass it with --trust
    except FaultkitError as e:
        return Collected(fault_id, "refused", None, str(e))
    if not same:
        return Collected(fault_id, "refused", None, f"{bundle}: judges to {verdict['status']}, not its recorded one")
    entry, _ = load_fault(ws, fault_id)
    made_on = json.loads((bundle / "inputs.json").read_text("utf-8")).get("entry_digest")
    if made_on != entry.digest():
        return Collected(fault_id, "stale", None, "the entry changed since this run; validate it again")
    target = into / fault_id / bundle.name
    if bundle.resolve() != target.resolve():
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(bundle, target)
    block = validation_block(ws, entry, target, sha256_file(target / "MANIFEST.json"), status=verdict["status"],
                             failed_rules=verdict["failed_rules"], platform=plan.platform, window_s=plan.window_s,
                             repeat=plan.repeat)
    record_validation(ws, entry, block)
    return Collected(fault_id, verdict["status"], block["bundle"], "recorded")
