"""Time `faultkit build` of minishop's images on the local Docker engine.

Three figures: a cold build of every service image (with --cold, the base image and the service
images this tool made earlier are removed first, so the debootstrap base is built again), a warm
rebuild (the engine's cache: same ids), and one patched service (the shipped checkout fault). Each
with seconds and image sizes. The CI record lives in a temporary state folder, so the cold and the
patched builds run every service's lint and unit tests in the image.
Usage: python bench/build_bench.py [--cold] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from faultkit.apps.descriptor import load_app  # noqa: E402
from faultkit.images import engine, naming  # noqa: E402
from faultkit.images.app_images import build_app_images  # noqa: E402
from faultkit.images.base import base_reference, default_base  # noqa: E402
from faultkit.workspace import Workspace  # noqa: E402

FAULT = "minishop-code-checkout-shipping-quote"


def remove_own_images(c: Any, ws: Workspace) -> int:
    """Every image of minishop's services, then the base image: what --cold starts without."""
    app = load_app(ws, "minishop")
    gone = 0
    for s in app.services:
        for image in c.images.list(filters=naming.service_filter(app, s.name)):
            c.images.remove(image.id, force=True)
            gone += 1
    assert app.source_dir is not None
    ref = base_reference(app.base_image, default_base(app.source_dir / "frontend" / "Dockerfile"))
    if c.images.list(name=ref):
        c.images.remove(ref)
        gone += 1
    return gone


def timed(ws: Workspace, c: Any, **kw: Any) -> dict[str, Any]:
    started = time.monotonic()
    out = build_app_images(ws, "minishop", client=c, **kw)
    return {
        "seconds": round(time.monotonic() - started, 1),
        "images": [{"service": b.service, "seconds": b.seconds, "cached": b.cached, "ci": b.ci,
                    "size_mb": round(b.size / 1e6, 1)} for b in out.builds],
        "marker": list(out.marker.found_in) if out.marker else None,
        "ids": [b.id for b in out.builds],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cold", action="store_true", help="remove the base and service images first")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    c = engine.client()
    with tempfile.TemporaryDirectory() as state:
        ws = Workspace(root=REPO, state_dir=Path(state))
        removed = remove_own_images(c, ws) if args.cold else 0
        first = timed(ws, c)
        warm = timed(ws, c)
        patched = timed(ws, c, fault_id=FAULT)
        c.images.remove(patched["ids"][0])  # the bench's patched image is not kept
    result = {"removed_first": removed, "cold" if args.cold else "first": first, "warm": warm, "patched": patched}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for name, run in result.items():
        if not isinstance(run, dict):
            continue
        sizes = [i["size_mb"] for i in run["images"]]
        cached = sum(i["cached"] for i in run["images"])
        print(f"{name:8} {run['seconds']:7.1f} s  {len(sizes)} images ({cached} cached), "
              f"{min(sizes):.1f}-{max(sizes):.1f} MB each" + (f"; marker in {run['marker']}" if run["marker"] else ""))
        for i in run["images"]:
            print(f"    {i['service']:15} {i['seconds']:6.1f} s  {i['size_mb']:6.1f} MB  "
                  f"cached={i['cached']} ci={i['ci']}")


if __name__ == "__main__":
    main()
