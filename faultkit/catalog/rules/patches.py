"""The patch rule: a code fault's patch stays inside its service's source and adds its marker."""

from __future__ import annotations

from collections.abc import Iterator

from faultkit.catalog.model import Entry
from faultkit.catalog.patches import patch_file_problems, read_patch, safe_path
from faultkit.catalog.rules.context import Context
from faultkit.errors import FaultkitError


def check_code(ctx: Context, e: Entry) -> Iterator[tuple[str, str]]:
    if not e.code or e.app not in ctx.app_names:
        return
    try:
        path = safe_path(ctx.workspace.root, e.code.patch, "patch")
        info = read_patch(path)
    except FaultkitError as err:
        yield "code.patch", str(err)
        return
    app = ctx.app(e.app)
    source = app.service_source(e.target.service) if e.target.service in app.service_names else None
    if source is None:
        yield (
            "code.patch",
            f"{e.target.service} has no source folder in {app.name}'s descriptor; a code fault needs one",
        )
        return
    outside = [f for f in info.files if not f.startswith(source + "/") or ".." in f.split("/")]
    if outside:
        yield "code.patch", f"touches files outside {source}/: {', '.join(outside)}"
    yield from (("code.patch", problem) for problem in patch_file_problems(path, source))
    if not any(e.code.marker in line for line in info.added):
        yield "code.marker", f"{e.code.marker!r} is not in any line the patch adds; pick text the patch introduces"
