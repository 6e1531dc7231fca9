"""The cluster's side of images: hand a built image to the nodes, and know it by every digest.

The kubelet reports a pod's image as the runtime knows it (its repository digest, or its config
digest, which is Docker's image id); both are recorded here per built image, from the node's own
image list, so a pod's imageID can be matched to the Build that made it.
"""

from __future__ import annotations

import json
import subprocess
import time
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


class ClusterImages:
    def __init__(self, conn: Connection, loader: list[str] | None, path: Path) -> None:
        self.conn, self.loader, self.path = conn, loader, path

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

    def ensure(self, ref: str, build_id: str, timeout: float = 60.0) -> None:
        self.ensure_all({ref: build_id}, timeout)

    def _tag_only(self, refs: set[str], listed: list[list[str]]) -> bool:
        """Whether the nodes list an image faultkit loaded before (one of `refs`) by its tag alone:
        the runtime then knows what this loader puts there by no repository digest, and reports a
        pod's image by its config digest, which is the build id."""
        return any(self._digests_on_nodes(ref, listed) == set() for ref in refs)

    def ensure_all(self, images: dict[str, str], timeout: float = 60.0) -> None:
        """Make the nodes have every ref (running the loader for those they lack), then record each
        one's digests as the node lists them."""
        data = self._load()
        listed = self._node_names()
        on_nodes = {ref: self._digests_on_nodes(ref, listed) for ref in images}
        missing = [ref for ref in images if on_nodes[ref] is None]
        if missing and self.loader:
            self._load_all(missing)
        # The kubelet lists a new image in the node's status only after its image cache refresh (every
        # 30 s) and its status period (10 s): up to 40 s. That wait teaches the repository digests a loader
        # such as kind's (`ctr import --digests`) gives; a loader that gives none (tools/cluster's `cluster
        # load`) leaves only the build id, known already, so when an earlier load shows that, nobody waits.
        if missing and self.loader and self._tag_only({v["ref"] for v in data.values()} | set(images), listed):
            for ref in missing:
                on_nodes[ref] = set()
        deadline = time.monotonic() + timeout
        while self.loader and any(v is None for v in on_nodes.values()) and time.monotonic() < deadline:
            time.sleep(1)
            listed = self._node_names()
            on_nodes = {ref: self._digests_on_nodes(ref, listed) if v is None else v for ref, v in on_nodes.items()}
        for ref, build_id in images.items():
            data[build_id] = {"ref": ref, "digests": sorted((on_nodes[ref] or set()) | {build_id})}
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

    def build_of(self, digest: str) -> str:
        for build_id, v in self._load().items():
            if digest == build_id or digest in (v.get("digests") or []):
                return str(build_id)
        return digest
