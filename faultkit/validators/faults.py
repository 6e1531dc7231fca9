"""Find the catalog entry a validation is asked for, linted, with a suggestion when it is not there."""

from __future__ import annotations

from faultkit.apps.descriptor import suggest
from faultkit.catalog.lint import Report, lint
from faultkit.catalog.model import Entry
from faultkit.errors import InputError
from faultkit.workspace import Workspace


def load_fault(workspace: Workspace, fault_id: str) -> tuple[Entry, Report]:
    """The entry and its lint report; the report's errors become the lint stage's result."""
    paths = sorted(workspace.catalog_dir.glob(f"*/{fault_id}.yaml"))
    if not paths:
        ids = sorted(p.stem for p in workspace.catalog_dir.glob("*/*.yaml"))
        raise InputError(
            f"no fault with id {fault_id!r} in the catalog{suggest(fault_id, ids)}; "
            "`faultkit catalog lint` lists what is there"
        )
    report = lint(workspace, paths[:1])
    if not report.entries:
        first = next((f.render() for f in report.findings if f.severity == "error"), "")
        raise InputError(f"{fault_id}: the entry does not load ({first}); fix it, then validate")
    return report.entries[0], report
