"""The node agent's image, built here like minishop's: a debootstrap base and a build on top, nothing pulled.

The tag is made of what the image is made of (the scripts and the base's id), so an unchanged agent
finds its image already there and a changed script gets a new tag, never a moved one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faultkit.apps.descriptor import BaseImage
from faultkit.errors import PlatformError
from faultkit.images import base, engine
from faultkit.images.build_api import build
from faultkit.images.context import context_tar, digest
from faultkit.images.naming import REVISION, TITLE

PAYLOAD = Path(__file__).resolve().parent / "payload"
FILES = ("Dockerfile", "nodeagent.py", "holdq.py", "readback.py")
# iptables for the loss and delay rules, nftables to remove the table iptables-nft leaves, python3 for the scripts
BASE = BaseImage(suite="bookworm", packages=("iptables", "nftables", "python3"))
REPOSITORY = "node-agent/tools"


def build_agent_image(client: Any = None) -> tuple[str, str]:
    """(reference, image id) of the agent image, built when the engine does not have it yet."""
    import docker

    c = client or engine.client()
    base_ref = base.base_reference(BASE, base.default_base(PAYLOAD / "Dockerfile"))
    base_id, _ = base.ensure_base(c, BASE, base_ref)
    ctx = context_tar([(name, PAYLOAD / name) for name in FILES])
    revision = digest(ctx + b"\0" + base_id.encode())
    ref = f"{REPOSITORY}:{revision[:12]}"
    try:
        return ref, str(c.images.get(ref).id)
    except docker.errors.ImageNotFound:
        pass
    result = build(c, ctx, tag=ref, buildargs={"BASE": base_ref},
                   labels={TITLE: "node-agent", REVISION: f"sha256:{revision}"})
    if result.error or not result.image_id:
        engine.remove_images(c, result.steps, keep=[base_id])
        raise PlatformError(f"node agent image: docker build failed: {result.error}")
    return ref, result.image_id
