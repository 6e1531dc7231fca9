"""The cluster's side of images: hand a built image to the nodes, and know it by every digest.

The kubelet reports a pod's image as the runtime knows it (its repository digest, or its config
digest, which is Docker's image id); both are recorded here per built image, from the node's own
image list when it has the image already, else from the first pod that runs it, so a pod's imageID
can be matched to the Build that made it.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faultkit.errors import PlatformError
from faultkit.platforms.kubernetes import objects
from faultkit.platforms.kubernetes.connection import Connection
from faultkit.yamlio import atomic_write


def normalized(ref: str) -> str:
    """`minishop/cart:1` -> `docker.io/minishop/cart:1`, as containerd names it."""
    first = ref.split("/", 1)[0]
    if "/" not in ref:
        return f"docker.io/library/{ref}"
    if "." in first or ":" in first or first == "localhost":
        return ref
    return f"docker.io/{ref}"


def image_digest(image_id: str) -> str:
    """`docker.io/x/y@sha256:ab..` or `sha256:ab..` -> `sha256:ab..`."""
    return image_id.rsplit("@", 1)[-1]


@dataclass(frozen=True)
class ExpectedImage:
    """The image a rolled-out pod must run: the reference set in its template, and the digests that
    image is known by so far (its build id, and any repository digest already learned).

    A container runs it when the kubelet reports one of those digests, or reports the reference
    itself: a loader such as kind's gives the image a repository digest that only the node's image
    list shows, up to 40 s after the load (the kubelet's image cache and status periods), and
    faultkit's tags name their content, so the reference settles it whatever digest comes with it.
    That digest is then learned (ClusterImages.build_of)."""

    ref: str
    digests: frozenset[str]

    def runs(self, status: Mapping[str, Any]) -> bool:
        got = image_digest(str(status.get("imageID") or ""))
        if not got:
            return False
        return got in self.digests or normalized(str(status.get("image") or "")) == normalized(self.ref)


class ClusterImages:
    def __init__(self, conn: Connection, loader: list[str] | None, path: Path) -> None:
        self.conn, self.loader, self.path = conn, loader, path
        self.lock = threading.RLock()  # the sampler's threads learn digests while a rollout loads images

    def _load(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.path.read_text())
            return data
        except (FileNotFoundError, ValueError):
            return {}

    def _node_names(self) -> list[list[str]]:
        return [list(img.get("names") or []) for node in objects.items(self.conn.core.list_node)
                for img in (node.get("status") or {}).get("images") or []]

    def _digests_on_nodes(self, ref: str, listed: list[list[str]] | None = None) -> set[str] | None:
        """The repository digests the nodes know `ref` by (an empty set for an image loaded without
        one: the kubelet then reports its config digest, the build id); None when no node has it.
        `listed`: the nodes' image names, when already read."""
        want = normalized(ref)
        repo = want.rsplit(":", 1)[0]
        out: set[str] | None = None
        for names in self._node_names() if listed is None else listed:
            if want in names:
                out = (out or set()) | {n.rsplit("@", 1)[1] for n in names if n.startswith(repo + "@")}
        return out

    def ensure(self, ref: str, build_id: str) -> None:
        self.ensure_all({ref: build_id})

    def ensure_all(self, images: dict[str, str]) -> None:
        """Make the nodes have every ref (one run of the loader for those they lack), and record each
        one's build id with the repository digests the nodes list it by now. A digest the nodes list
        only later (kind's loader gives one; the kubelet lists a new image up to 40 s after a load) is
        learned from the first pod that runs the image (build_of), rather than waited for here."""
        listed = self._node_names()
        on_nodes = {ref: self._digests_on_nodes(ref, listed) for ref in images}
        missing = [ref for ref in images if on_nodes[ref] is None]
        if missing and self.loader:
            self._load_all(missing)
        with self.lock:
            data = self._load()
            for ref, build_id in images.items():
                known = set(data.get(build_id, {}).get("digests") or [])
                data[build_id] = {"ref": ref, "digests": sorted(known | (on_nodes[ref] or set()) | {build_id})}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True))

    def _load_all(self, refs: list[str]) -> None:
        """One run of the loader for every ref (`COMMAND IMAGE...`, as `kind load docker-image` and
        `cluster load` take them): one archive, so the layers the images share go to the nodes once."""
        assert self.loader is not None
        done = subprocess.run([*self.loader, *refs], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            last = ((done.stderr or done.stdout).strip().splitlines() or ["no output"])[-1]
            raise PlatformError(f"loading {', '.join(refs)} into the cluster with `{' '.join(self.loader)}` "
                                f"failed: {last}")

    def digests(self, ref: str) -> frozenset[str]:
        out: set[str] = set()
        for build_id, v in self._load().items():
            if v.get("ref") == ref:
                out |= set(v.get("digests") or []) | {build_id}
        return frozenset(out)

    def location_of(self, build_id: str) -> str | None:
        v = self._load().get(build_id)
        return str(v["ref"]) if v else None

    def expected(self, ref: str) -> ExpectedImage | None:
        """What a pod rolled out to `ref` must run; None for an image faultkit did not hand to the
        nodes (one named with --images), which any digest may be."""
        digests = self.digests(ref)
        return ExpectedImage(ref, digests) if digests else None

    def build_of(self, digest: str, ref: str = "") -> str:
        """The build a container runs, from the digest the kubelet reports (and the reference it
        reports, `ref`): a digest not yet known, reported with the reference of exactly one build,
        is learned as that build's; anything else is returned as it is."""
        with self.lock:
            data = self._load()
            for build_id, v in data.items():
                if digest == build_id or digest in (v.get("digests") or []):
                    return str(build_id)
            builds = [b for b, v in data.items() if ref and normalized(str(v.get("ref"))) == normalized(ref)]
            if len(builds) != 1 or not digest.startswith("sha256:"):
                return digest
            data[builds[0]]["digests"] = sorted({*data[builds[0]]["digests"], digest})
            atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True))
            return builds[0]
