"""`catalog export --format chaos-mesh`: every admitted direct fault as the Chaos Mesh object that
would carry it out on a cluster (chaos-mesh.org/v1alpha1).

Mapping (README, "Chaos Mesh export"): instance-kill and instance-failure are PodChaos pod-kill and
pod-failure; network-delay and network-loss are NetworkChaos delay and loss on the target's
traffic; cpu-stress and memory-stress are StressChaos with a cpu or memory stressor in the target
container. The selector is the target workload's own pod selector (spec.selector.matchLabels in
the app's manifests) in the given namespace; the mode is `one` for a pod-level fault and `all` for
a service-level one; the duration is the window the fault was admitted with, unless one is given.
Actions with no faithful equivalent are listed with the reason instead of being approximated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from faultkit.apps.descriptor import load_app
from faultkit.apps.manifests import find_object, load_manifests
from faultkit.catalog.model import Entry, thaw
from faultkit.catalog.release import Custody, admitted
from faultkit.errors import InputError, UsageError
from faultkit.workspace import Workspace

API_VERSION = "chaos-mesh.org/v1alpha1"
MODES = {"pod": "one", "service": "all"}
UNSUPPORTED = {
    "dns-error": "DNSChaos matches the names a pod resolves, not the target's own name for its callers; "
                 "faultkit's dns-error fails resolution of the target for every caller",
    "disk-fill": "Chaos Mesh has no in-cluster filesystem-fill chaos (PhysicalMachineChaos works on hosts, "
                 "not pods)",
    "io-delay": "IOChaos needs the volume path to delay, which the entry does not name",
}
NAME_RE_MAX = 253


@dataclass(frozen=True)
class NotExported:
    id: str
    action: str
    reason: str


def duration_text(seconds: float) -> str:
    """Chaos Mesh durations are Go durations: 10s, 5m, 1m30s."""
    whole = int(round(seconds))
    if whole <= 0:
        raise UsageError(f"duration {seconds!r}s: give a positive duration such as 30s or 5m")
    minutes, secs = divmod(whole, 60)
    return (f"{minutes}m" if minutes else "") + (f"{secs}s" if secs or not minutes else "")


def selector(entry: Entry, workspace: Workspace, namespace: str) -> dict[str, Any]:
    app = load_app(workspace, entry.app)
    workload = entry.target.workload or app.service(entry.target.service).workload
    doc = find_object(load_manifests(app.manifests_dir), "workload", workload)
    labels = ((doc.body.get("spec") or {}).get("selector") or {}).get("matchLabels")
    if not labels:
        raise InputError(f"{doc.file}:{doc.line}: workload {workload!r} has no spec.selector.matchLabels to select "
                         "its pods by")
    return {"namespaces": [namespace], "labelSelectors": {str(k): str(v) for k, v in sorted(labels.items())}}


def chaos_object(entry: Entry, workspace: Workspace, namespace: str, duration_s: float | None) -> dict[str, Any]:
    """The Chaos Mesh object for one direct entry; raises KeyError for an action with no equivalent."""
    assert entry.direct is not None
    action, params = entry.direct.action, thaw(entry.direct.params)
    if entry.level not in MODES:
        raise KeyError(f"{entry.level}-level: Chaos Mesh selects pods; a {entry.level} needs PhysicalMachineChaos")
    window = duration_s if duration_s is not None else (entry.validation.window_s if entry.validation else None)
    spec: dict[str, Any] = {"selector": selector(entry, workspace, namespace), "mode": MODES[entry.level]}
    container = entry.target.container or entry.target.service
    if action in ("instance-kill", "instance-failure"):
        kind = "PodChaos"
        spec["action"] = "pod-kill" if action == "instance-kill" else "pod-failure"
    elif action == "network-delay":
        kind = "NetworkChaos"
        spec |= {"action": "delay", "direction": "to", "delay": {"latency": f"{int(params.get('ms', 2000))}ms"}}
    elif action == "network-loss":
        kind = "NetworkChaos"
        spec |= {"action": "loss", "direction": "to", "loss": {"loss": str(int(params.get("percent", 50)))}}
    elif action == "cpu-stress":
        kind = "StressChaos"
        spec |= {"containerNames": [container], "stressors": {"cpu": {"workers": int(params.get("workers", 2))}}}
    elif action == "memory-stress":
        kind = "StressChaos"
        spec |= {"containerNames": [container],
                 "stressors": {"memory": {"workers": 1, "size": f"{int(params.get('mb', 256))}MB"}}}
    else:
        raise KeyError(UNSUPPORTED.get(action, f"no Chaos Mesh equivalent for {action!r}"))
    if window and action != "instance-kill":  # a kill is instantaneous: PodChaos pod-kill takes no duration
        spec["duration"] = duration_text(window)
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {"name": entry.id[:NAME_RE_MAX], "namespace": namespace,
                     "annotations": {"faultkit/fault": entry.id, "faultkit/action": action}},
        "spec": spec,
    }


def chaos_mesh(workspace: Workspace, custody: Custody, namespace: str = "default",
               duration_s: float | None = None) -> tuple[list[dict[str, Any]], list[NotExported]]:
    """(Chaos Mesh objects, direct entries with no equivalent) over the admitted catalog, by id."""
    included, _ = admitted(workspace, custody)
    objects, skipped = [], []
    for entry, _digest, _signer in included:
        if entry.direct is None:
            continue
        app = load_app(workspace, entry.app)
        if app.upstream is not None and not app.manifests_dir.is_dir():  # its pods' labels are in the user's copy
            skipped.append(NotExported(entry.id, entry.direct.action, f"{app.name}'s manifests are upstream's and "
                                       f"no copy is in apps/{app.name}/manifests to select its pods by"))
            continue
        try:
            objects.append(chaos_object(entry, workspace, namespace, duration_s))
        except KeyError as e:
            skipped.append(NotExported(entry.id, entry.direct.action, str(e.args[0])))
    return objects, skipped


def object_list(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """A v1 List, so `kubectl apply -f` takes the whole export at once."""
    return {"apiVersion": "v1", "kind": "List", "items": objects}
