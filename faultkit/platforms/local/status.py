"""The supervisor's status record: what `status` answers, `faultkit status --json` prints, the client reads.

These are the JSON shapes on the wire (field order included, so the bytes stay as they were);
`instances` keeps its wire name although the local platform calls them replicas.
"""

from __future__ import annotations

from typing import Literal, TypedDict

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
