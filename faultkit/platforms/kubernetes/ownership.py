"""Which namespace is faultkit's: the record of the app instance, kept outside the cluster.

faultkit works in exactly one namespace per app instance: one it created (`up`), which is its own
entirely and which `down` deletes; or one the user handed it (`--adopt NAMESPACE`), where it only
patches the objects a fault names and restores them. The record is a file under the state folder,
never an object in the app's namespace, so nothing an agent can read there says faultkit was here.
The namespace's uid is recorded too: a namespace deleted and recreated by someone else under the
same name is not faultkit's.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from faultkit.errors import PlatformError
from faultkit.platforms.kubernetes.connection import ClusterTarget
from faultkit.yamlio import atomic_write

# GIVEN: a namespace someone else made for faultkit (a campaign Job's): the app is applied into it and
# `down` deletes what was applied, never the namespace
CREATED, ADOPTED, GIVEN = "created", "adopted", "given"
# what `down` did, by mode, for people
DOWN_DONE = {CREATED: "namespace {ns} is deleted and gone",
             GIVEN: "its objects in namespace {ns} are deleted (the namespace stays: faultkit did not create it)",
             ADOPTED: "released: its objects in namespace {ns} were left as they are"}


@dataclass(frozen=True)
class Record:
    app: str
    mode: str  # CREATED, ADOPTED or GIVEN
    namespace_uid: str
    kubeconfig: str
    context: str
    server: str
    namespace: str
    images: dict[str, str]  # service -> image reference as deployed by up (created mode)
    since: float
    loader: str = ""  # the command that hands a built image to the cluster ("" when it pulls from a registry)
    prometheus: str = ""  # the Prometheus whose PromQL gives the request counters ("": the API server's pod proxy)

    @property
    def target(self) -> ClusterTarget:
        return ClusterTarget(self.kubeconfig, self.context, self.server, self.namespace)


class Ownership:
    def __init__(self, state_dir: Path) -> None:
        self.base = state_dir / "kubernetes"
        self.path = self.base / "instance.json"

    def read(self) -> Record | None:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        except ValueError:
            raise PlatformError(f"{self.path}: not valid JSON; remove it after checking the namespace by "
                                "hand") from None
        return Record(**data)

    def write(self, target: ClusterTarget, app: str, mode: str, uid: str, images: dict[str, str],
              loader: str = "", prometheus: str = "") -> Record:
        rec = Record(app=app, mode=mode, namespace_uid=uid, kubeconfig=target.kubeconfig, context=target.context,
                     server=target.server, namespace=target.namespace, images=dict(images), since=time.time(),
                     loader=loader, prometheus=prometheus)
        self.base.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps(asdict(rec), indent=2, sort_keys=True) + "\n")
        return rec

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def require(self) -> Record:
        rec = self.read()
        if rec is None:
            raise PlatformError("nothing is up on the kubernetes platform; run `faultkit up --platform kubernetes` "
                                "first (or --adopt NAMESPACE)")
        return rec


def check_namespace(rec: Record, namespace: str, uid: str | None) -> None:
    """Refuse to work in a namespace that is not the recorded one, or that has been replaced."""
    if namespace != rec.namespace:
        raise PlatformError(f"namespace {namespace!r} is not faultkit's (it works in {rec.namespace!r}); "
                            "faultkit touches no other namespace")
    if uid is None:
        raise PlatformError(f"namespace {namespace!r} is gone; run `faultkit down --platform kubernetes` to forget it")
    if uid != rec.namespace_uid:
        raise PlatformError(f"namespace {namespace!r} was deleted and created again by someone else (uid {uid}, "
                            f"recorded {rec.namespace_uid}); faultkit will not touch it: run `faultkit down` to "
                            "forget it")
