"""The supervisor's status record: what `status` answers, `faultkit status --json` prints, the client reads.

These are the JSON shapes on the wire (field order included, so the bytes stay as they were);
`instances` keeps its wire name although the local platform calls them replicas.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from faultkit.platforms.base import AppStatus, Instance, ServiceState

Phase = Literal["starting", "deploying", "running", "failed"]


class ReplicaRecord(TypedDict):
    id: str
    service: str
    workload: str
    build: str
    ready: bool
    restarts: int
    oom_kills: int
    last_exit: int | None
    pids: list[int]
    ports: dict[str, int]  # pod port (as a string, JSON keys are) -> loopback port


class ServiceStatus(TypedDict):
    workload: str
    build: str | None  # the build it runs (None while the deployment builds it)
    instances: list[ReplicaRecord]
    endpoint: str | None  # its Service address, None when it exposes no Service port


class SupervisorStatus(TypedDict):
    phase: Phase
    error: str | None  # why the deployment failed
    app: str
    pid: int
    services: dict[str, ServiceStatus]  # by app service name
    actions: list[str]  # handles of the direct actions in force, sorted
    cpu_limits: str  # "enforced (cgroup vN)" or "not enforced: <why>"


def typed_status(platform: str, record: SupervisorStatus) -> AppStatus:
    """The supervisor's record as the protocol's AppStatus; its JSON is the record again, byte for byte."""
    services = {name: ServiceState(
        build=svc["build"], endpoint=svc["endpoint"], details={"workload": svc["workload"]},
        instances=tuple(Instance(id=r["id"], service=r["service"], build=r["build"], ready=r["ready"],
                                 restarts=r["restarts"], oom_kills=r["oom_kills"], last_exit=r["last_exit"])
                        for r in svc["instances"]),
        instance_details={r["id"]: {"workload": r["workload"], "pids": r["pids"], "ports": r["ports"]}
                          for r in svc["instances"]})
        for name, svc in record["services"].items()}
    return AppStatus(platform, record["app"], phase=record["phase"], error=record["error"],
                     where="on the local platform", services=services,
                     notes=(f"memory limits: enforced; cpu limits: {record.get('cpu_limits', 'not enforced')}",),
                     details={"pid": record["pid"], "actions": record["actions"], "cpu_limits": record["cpu_limits"]})
