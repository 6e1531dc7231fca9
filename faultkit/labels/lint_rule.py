"""The declared-evidence check as a catalog lint rule.

catalog must not import labels (labels reads entries through catalog), so the command layer gives
this rule to the linter by name (commands/catalog_cmds.py EVIDENCE_RULES).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from faultkit.catalog.model import Entry, thaw
from faultkit.catalog.patches import safe_path
from faultkit.catalog.rules.context import Context
from faultkit.errors import FaultkitError


def admitting_labels(ctx: Context, e: Entry) -> dict[str, Any] | None:
    """The labels of the entry's admitting bundle: the stored labels.json (judge keeps it honest),
    else recomputed; None when the entry has no admitting bundle here."""
    v = e.validation
    if v is None or v.verdict != "admitted" or not v.bundle:
        return None
    folder = safe_path(ctx.workspace.root, v.bundle, "validation.bundle")
    if not folder.is_dir():
        return None
    # the labelling code (bundles, signatures, windows) only for an entry with an admitting bundle:
    # a lint of entries without one, the common case, does not load it (issue 20)
    from faultkit.labels.catalog_io import stored_labels
    from faultkit.labels.core import app_of, label_bundle

    return stored_labels(folder) or label_bundle(folder, app_of(ctx.workspace, folder))


def check_declared_evidence(ctx: Context, e: Entry) -> Iterator[tuple[str, str, str]]:
    try:
        labels = admitting_labels(ctx, e)
    except FaultkitError as err:
        yield "validation.bundle", f"cannot label the admitting bundle: {err}", "warning"
        return
    if labels is None:
        return
    from faultkit.labels.declared import check_declared

    for f in check_declared({"evidence": thaw(e.raw.get("evidence", {}))}, labels):
        yield f.path, f.message, "warning"

