"""The node agent's DaemonSet: its own namespace, created and recorded by faultkit, and the exec
channel to its pods.

The namespace is `<app namespace>-node`, never the app's: nothing an agent under test lists in
the app's namespace shows it. Like the app's namespace it is recorded with its uid (agent.json
beside the app's record), refused when it exists and is not faultkit's, and deleted by `down`.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.stream import stream

from faultkit.errors import PlatformError
from faultkit.platforms.kubernetes.agent.image import build_agent_image
from faultkit.platforms.kubernetes.connection import Connection, api_error
from faultkit.platforms.kubernetes.images import ClusterImages
from faultkit.platforms.kubernetes.namespaces import Namespaces
from faultkit.platforms.kubernetes.ownership import Record
from faultkit.yamlio import atomic_write

NAME = "node"
LABELS = {"app": NAME}
SCRIPT = "/opt/node/nodeagent.py"
READBACK = "/opt/node/readback.py"  # what of an action remains (issue 29)


@dataclass(frozen=True)
class AgentRecord:
    namespace: str
    uid: str
    image: str


def daemonset(image: str) -> dict[str, Any]:
    container = {
        "name": NAME, "image": image, "imagePullPolicy": "IfNotPresent",
        "command": ["python3", SCRIPT, "serve"],
        # privileged: setns into other containers' namespaces, cgroup moves, iptables in their netns
        "securityContext": {"privileged": True},
        # a request, no limit: what it starts runs in the target's cgroups, but until a worker has
        # moved there it runs here, and a best-effort pod gets next to no CPU on a busy node
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
        "volumeMounts": [{"name": "cgroup", "mountPath": "/host/cgroup"}],
    }
    spec = {
        "hostPID": True,  # the target's processes and /proc/<pid>/ns/* by host pid
        "terminationGracePeriodSeconds": 2,
        "tolerations": [{"operator": "Exists"}],  # every node, tainted ones too
        "containers": [container],
        "volumes": [{"name": "cgroup", "hostPath": {"path": "/sys/fs/cgroup", "type": "Directory"}}],
    }
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": NAME, "labels": LABELS},
            "spec": {"selector": {"matchLabels": LABELS}, "template": {"metadata": {"labels": LABELS}, "spec": spec}}}


class NodeAgent:
    def __init__(self, conn: Connection, images: ClusterImages, app: Record, state: Path) -> None:
        self.conn, self.images, self.app = conn, images, app
        self.path = state / "agent.json"
        self.namespace = f"{app.namespace}-node"

    def read(self) -> AgentRecord | None:
        try:
            return AgentRecord(**json.loads(self.path.read_text()))
        except FileNotFoundError:
            return None
        except (ValueError, TypeError):
            raise PlatformError(f"{self.path}: not a node agent record; check namespace {self.namespace} by hand, "
                                "then remove the file") from None

    def _as_record(self, rec: AgentRecord) -> Record:
        return replace(self.app, namespace=rec.namespace, namespace_uid=rec.uid)

    def ensure(self, timeout: float = 180.0) -> AgentRecord:
        """The agent namespace and DaemonSet, created when missing, with a ready pod on every node."""
        ref, image_id = build_agent_image()
        rec = self.read()
        ns = Namespaces(self.conn)
        if rec is not None and rec.image == ref:
            ns.check_owned(self._as_record(rec))
            if self._missing(rec) == set():  # the usual case from the second action on: nothing to do
                return rec
        self.images.ensure(ref, image_id)
        if rec is None:
            uid = ns.create(self.namespace)
            rec = AgentRecord(self.namespace, uid, ref)
            self._write(rec)
        else:
            ns.check_owned(self._as_record(rec))
        body = daemonset(ref)
        try:
            self.conn.apps.create_namespaced_daemon_set(rec.namespace, body)
        except ApiException as e:
            if e.status != 409:
                raise api_error(f"create the node agent in {rec.namespace}", e) from None
            self.conn.apps.patch_namespaced_daemon_set(NAME, rec.namespace, body)
        if rec.image != ref:
            rec = replace(rec, image=ref)
            self._write(rec)
        self._wait_ready(rec, timeout)
        return rec

    def _write(self, rec: AgentRecord) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps(asdict(rec), indent=2, sort_keys=True) + "\n")

    def _pods(self, rec: AgentRecord) -> list[Any]:
        sel = ",".join(f"{k}={v}" for k, v in LABELS.items())
        return list(self.conn.core.list_namespaced_pod(rec.namespace, label_selector=sel).items)

    def _missing(self, rec: AgentRecord) -> set[str]:
        """The nodes without a ready agent pod running the recorded image."""
        nodes = {n.metadata.name for n in self.conn.core.list_node().items}
        return nodes - {p.spec.node_name for p in self._pods(rec) if _ready(p, rec.image)}

    def _wait_ready(self, rec: AgentRecord, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            missing = self._missing(rec)
            if not missing:
                return
            if time.monotonic() > deadline:
                raise PlatformError(f"node agent in {rec.namespace}: no ready pod on {sorted(missing)} after "
                                    f"{timeout:g}s ({self._why(rec)}); direct actions need it")
            time.sleep(0.5)

    def _why(self, rec: AgentRecord) -> str:
        for p in self._pods(rec):
            for cs in p.status.container_statuses or []:
                waiting = cs.state.waiting if cs.state else None
                if waiting and waiting.reason:
                    return f"{waiting.reason}: {waiting.message or ''}".strip()
        return "its pod is not ready"

    def run(self, node: str, args: list[str], timeout: float = 60.0, script: str = SCRIPT) -> dict[str, Any]:
        """Run one agent command on `node` and return its JSON answer; its error is a PlatformError."""
        rec = self.read()
        if rec is None:
            raise PlatformError(f"no node agent is recorded for {self.app.namespace}; start an action first")
        pod = next((p.metadata.name for p in self._pods(rec) if p.spec.node_name == node and _ready(p, rec.image)),
                   None)
        if pod is None:
            raise PlatformError(f"node agent in {rec.namespace}: no ready pod on node {node}")
        # a client of its own: stream() swaps the request function of the client it is handed,
        # and the sampler's threads use the platform's client meanwhile
        api = client.CoreV1Api(client.ApiClient(self.conn.api.configuration))
        try:
            resp = stream(api.connect_get_namespaced_pod_exec, pod, rec.namespace, container=NAME,
                          command=["python3", script, *args], stderr=True, stdin=False, stdout=True, tty=False,
                          _preload_content=False)
            resp.run_forever(timeout=timeout)
            out, err = resp.read_stdout(), resp.read_stderr()
            resp.close()
        except ApiException as e:
            raise api_error(f"node agent on {node}", e) from None
        last = (out or "").strip().splitlines()[-1:] or [""]
        try:
            answer: dict[str, Any] = json.loads(last[0])
        except ValueError:
            raise PlatformError(f"node agent on {node}: {args[0]} gave no answer "
                                f"({(err or out or 'no output').strip()[-200:]})") from None
        if "error" in answer:
            raise PlatformError(f"node agent on {node}: {args[0]} {args[2] if len(args) > 2 else ''}: "
                                f"{answer['error']}")
        return answer

    def remove(self, timeout: float = 120.0) -> None:
        """Delete the agent's namespace (only the one recorded) and wait until it is gone."""
        rec = self.read()
        if rec is None:
            return
        Namespaces(self.conn).delete_owned(self._as_record(rec), timeout)
        self.path.unlink(missing_ok=True)


def _ready(pod: Any, image: str) -> bool:
    if pod.metadata.deletion_timestamp or pod.status.phase != "Running":
        return False
    if not any(c.image == image for c in pod.spec.containers):
        return False
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])
