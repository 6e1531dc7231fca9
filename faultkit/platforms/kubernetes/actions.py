"""Direct actions on the kubernetes platform, carried out by the node agent (agent/) in the target pods.

- instance-kill: SIGKILL to the container's first process; the kubelet restarts it (restartCount, exit 137).
- instance-failure: SIGSTOP to every process of the container, SIGCONT on stop (as locally).
- cpu-stress: `workers` busy loops in the container's PID namespace and cgroups, counted against its CPU limit.
- memory-stress: `mb` MiB held in the container's PID namespace and cgroups. Past its limit the OOM
  killer takes the container's own process (the holder is exempt, and dies with the container's PID
  namespace), so the pod shows a real OOMKilled restart.
- network-delay: an iptables NFQUEUE rule in the pod's netns and a holder (agent/payload/holdq.py)
  that keeps each packet to the service's ports `ms` before letting it through.
- network-loss: an iptables `statistic` rule in the pod's netns dropping `percent` of the packets
  to the service's ports.

tc netem is not used: kernels built without sch_netem (this project's test machines' among them) have
NFQUEUE and the statistic match, which give the same per-packet delay and loss. Network rules leave
the node's own traffic alone (the kubelet's probes, the API server's pod proxy that reads /metrics),
as the local platform's relays do: a network fault is about the service's clients.

Each action is recorded (actions.json beside the app's record) BEFORE the agent carries it out, under
a handle `<action>-<tag>`; every process the agent starts carries the tag and every chain is named
after it, so stopping a handle, even one whose start was cut short by a kill, removes everything.
A record goes only once its traces are gone: a handle that is not recorded has nothing left to stop.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from faultkit.errors import InputError, PlatformError, Unsupported
from faultkit.platforms.kubernetes.agent.daemon import READBACK, NodeAgent
from faultkit.platforms.params import int_param
from faultkit.yamlio import atomic_write

SUPPORTED = frozenset({"instance-kill", "instance-failure", "cpu-stress", "memory-stress", "network-delay",
                       "network-loss"})
NETWORK = frozenset({"network-delay", "network-loss"})
HANDLE = re.compile(r"^(?P<action>[a-z-]+)-(?P<tag>[0-9a-f]{10})$")


@dataclass(frozen=True)
class PodTarget:
    """One pod an action acts on, as the agent finds it on its node."""

    instance: str
    pod: str
    uid: str
    container: str  # the container's runtime id, from the pod's status
    node: str
    host_ip: str
    ports: tuple[int, ...]


def target_of(instance: str, pod: dict[str, Any], container: str, default_ports: tuple[int, ...]) -> PodTarget:
    status = next((c for c in pod["status"].get("containerStatuses") or [] if c["name"] == container), None)
    cid = (status or {}).get("containerID") or ""
    if not cid or not (status or {}).get("state", {}).get("running"):
        raise PlatformError(f"{instance}: container {container} of pod {pod['metadata']['name']} is not running; "
                            "wait until it is, then start the action again")
    spec: dict[str, Any] = next((c for c in pod["spec"]["containers"] if c["name"] == container), {})
    ports = tuple(int(p["containerPort"]) for p in spec.get("ports") or []) or default_ports
    return PodTarget(instance, pod["metadata"]["name"], pod["metadata"]["uid"], cid.split("://", 1)[-1],
                  pod["spec"].get("nodeName") or "", pod["status"].get("hostIP") or "", ports)


def check_supported(action: str) -> None:
    if action not in SUPPORTED:
        raise Unsupported(f"action {action!r}: the kubernetes platform carries out {', '.join(sorted(SUPPORTED))} "
                          "(a node agent in the pod's namespaces); it has no way to do this one here")


def chosen(slots: dict[str, dict[str, Any]], action: str, params: dict[str, Any], mode: str | None) -> list[str]:
    """The instances an action acts on: `instance`, or one (the first ready) or all of them."""
    if not slots:
        raise PlatformError("the service has no running pod to act on")
    wanted = params.get("instance")
    if wanted:
        if wanted not in slots:
            raise InputError(f"instance {wanted!r} is not running; running: {sorted(slots)}")
        return [str(wanted)]
    mode = mode or str(params.get("mode", "one" if action in ("instance-kill", "instance-failure") else "all"))
    if mode not in ("one", "all"):
        raise InputError(f"action parameter 'mode': expected 'one' or 'all', got {mode!r}")
    ordered = sorted(slots, key=lambda i: (not _ready(slots[i]), i))
    return ordered[:1] if mode == "one" else ordered


def _ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in pod["status"].get("conditions") or [])


def agent_params(action: str, params: dict[str, Any], t: PodTarget) -> dict[str, Any]:
    """What the agent needs for one target, the values checked against the catalog's vocabulary."""
    if action == "cpu-stress":
        return {"workers": int_param(params, action, "workers")}
    if action == "memory-stress":
        return {"mb": int_param(params, action, "mb")}
    if action in NETWORK:
        value = int_param(params, action, "ms" if action == "network-delay" else "percent")
        return {"value": value, "ports": list(t.ports), "exempt": [t.host_ip] if t.host_ip else []}
    return {}


class PodActions:
    def __init__(self, agent: NodeAgent, path: Path) -> None:
        self.agent, self.path = agent, path

    def _load(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.path.read_text())
            return data
        except FileNotFoundError:
            return {}
        except ValueError:
            raise PlatformError(f"{self.path}: not valid JSON; check the app's pods by hand, then remove it") from None

    def _save(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True) + "\n")

    def start(self, action: str, service: str, targets: list[PodTarget], params: dict[str, Any]) -> str:
        check_supported(action)
        wanted = {t.instance: agent_params(action, params, t) for t in targets}  # bad parameters: nothing starts
        self.agent.ensure()
        tag = secrets.token_hex(5)
        handle = f"{action}-{tag}"
        data = self._load()
        data[handle] = {"action": action, "service": service, "tag": tag, "targets": [asdict(t) for t in targets],
                        "done": {}}
        self._save(data)  # before the agent acts: a kill from here on still leaves a handle to stop
        try:
            for t in targets:
                answer = self.agent.run(t.node, ["start", tag, action, t.container, t.uid,
                                                 json.dumps(wanted[t.instance])])
                data[handle]["done"][t.instance] = answer
                self._save(data)
        except BaseException:
            try:
                self.stop(handle)
            except PlatformError:
                pass  # the record stays, so `recover` stops it later; the first error is the one to report
            raise
        return handle

    def stop(self, handle: str) -> None:
        if not HANDLE.match(handle):
            raise InputError(f"no running action {handle!r} on the kubernetes platform")
        data = self._load()
        record = data.get(handle)
        if record is None:
            return  # its record went once every trace had gone: nothing is left to stop
        if record["action"] != "instance-kill":  # a kill is over once sent; the restart is the kubelet's
            for t in record["targets"]:
                answer = self.agent.run(t["node"], ["stop", record["tag"], record["action"], t["container"], t["uid"]])
                if answer.get("running"):
                    raise PlatformError(f"{handle}: processes {answer['running']} still run on {t['node']} after "
                                        "stopping; run the stop again")
        remains = self._read_back(record)  # the record goes only once nothing of the action remains
        if remains:
            raise PlatformError(f"{handle} stopped, but left behind: {'; '.join(remains)}")
        data.pop(handle, None)
        self._save(data)

    def _read_back(self, record: dict[str, Any]) -> list[str]:
        out: list[str] = []
        if record["action"] == "instance-kill":
            return out
        for t in record["targets"]:
            args = [record["tag"], record["action"], t["container"], t["uid"]]
            out += [f"{t['node']}: {line}" for line in self.agent.run(t["node"], args, script=READBACK)["leftovers"]]
        return out

    def leftovers(self, handle: str) -> list[str]:
        """What of the action the nodes still show, read back by the agent; [] for a handle whose
        record went (it went only once every trace had gone) or for a kill (over once sent)."""
        record = self._load().get(handle) if HANDLE.match(handle) else None
        if record is None or record["action"] == "instance-kill":
            return []
        return self._read_back(record) or [f"{handle} is still recorded as in force"]

    def handles(self) -> list[str]:
        return sorted(self._load())

    def targets(self, handle: str) -> list[PodTarget]:
        record = self._load().get(handle) or {}
        return [PodTarget(**{**t, "ports": tuple(t["ports"])}) for t in record.get("targets", [])]

    def stop_all(self) -> None:
        for handle in self.handles():
            self.stop(handle)
