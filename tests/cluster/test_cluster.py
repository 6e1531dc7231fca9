"""The one-node cluster does what the kubernetes platform needs: scheduling, images, Service
networking, CoreDNS, OOM kills with restarts, readiness and EndpointSlices, and logs."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from kubernetes import client, utils

from .conftest import wait_until

pytestmark = [pytest.mark.live, pytest.mark.exclusive]

VERSION = "v1.34.4"


def _pod_spec(image: str, args: list[str], **extra: Any) -> dict[str, Any]:
    container = {"name": "app", "image": image, "imagePullPolicy": "IfNotPresent", "args": args, **extra}
    return {"containers": [container], "terminationGracePeriodSeconds": 1}


def _deploy(api: client.ApiClient, namespace: str, name: str, image: str, args: list[str], **extra: Any) -> None:
    labels = {"app": name}
    utils.create_from_dict(api, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": _pod_spec(image, args, **extra)}},
    }, namespace=namespace)
    utils.create_from_dict(api, {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
        "spec": {"selector": labels, "ports": [{"port": 8080, "targetPort": 8080}]},
    }, namespace=namespace)


def _running_pod(core: client.CoreV1Api, namespace: str, app: str) -> client.V1Pod:
    def ready() -> client.V1Pod | None:
        for pod in core.list_namespaced_pod(namespace, label_selector=f"app={app}").items:
            if pod.status.phase == "Running" and pod.status.pod_ip:
                return pod
        return None
    return wait_until(ready, 120, f"a running pod of {app}")


def test_node_is_ready_and_the_api_answers(api: client.ApiClient, core: client.CoreV1Api) -> None:
    nodes = core.list_node().items
    assert [node.metadata.name for node in nodes] == ["node-1"]
    conditions = {c.type: c.status for c in nodes[0].status.conditions}
    assert conditions["Ready"] == "True"
    assert nodes[0].status.node_info.kubelet_version == VERSION
    assert client.VersionApi(api).get_code().git_version == VERSION
    assert nodes[0].spec.pod_cidr == "10.244.0.0/24"
    # Pods reach the API server through the kubernetes Service: its endpoint is the node's address.
    endpoints = core.read_namespaced_endpoints("kubernetes", "default")
    node_ip = next(a.address for a in nodes[0].status.addresses if a.type == "InternalIP")
    assert [a.ip for s in endpoints.subsets for a in s.addresses] == [node_ip]
    dns = client.AppsV1Api(api).read_namespaced_deployment_status("coredns", "kube-system")
    assert dns.status.available_replicas == 1


def test_deployment_service_and_dns(api: client.ApiClient, core: client.CoreV1Api, namespace: str,
                                    testapp_image: str) -> None:
    _deploy(api, namespace, "web", testapp_image, ["serve"],
            readinessProbe={"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 1})
    pod = _running_pod(core, namespace, "web")
    cluster_ip = core.read_namespaced_service("web", namespace).spec.cluster_ip
    fqdn = f"web.{namespace}.svc.cluster.local"
    for name, target in (("client-short", "web"), ("client-fqdn", fqdn)):
        core.create_namespaced_pod(namespace, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {**_pod_spec(testapp_image, ["get", f"http://{target}:8080/"]), "restartPolicy": "Never"}})
    for name, target in (("client-short", "web"), ("client-fqdn", fqdn)):
        phase = wait_until(lambda n=name: core.read_namespaced_pod(n, namespace).status.phase
                           in ("Succeeded", "Failed") and core.read_namespaced_pod(n, namespace).status.phase,
                           120, f"pod {name} to finish")
        log = core.read_namespaced_pod_log(name, namespace)
        assert phase == "Succeeded", log
        # CoreDNS answered with the Service's cluster IP, and kube-proxy's rules routed to the pod.
        assert f"resolved {target} to [{cluster_ip}]" in log
        assert f"hello from {pod.metadata.name}" in log
    lines = core.read_namespaced_pod_log(pod.metadata.name, namespace).splitlines()
    assert lines[0].startswith("testapp serving on :8080")
    assert sum(line.startswith("request GET / from") for line in lines) >= 2


def test_memory_limit_oomkills_and_restarts(api: client.ApiClient, core: client.CoreV1Api, namespace: str,
                                            testapp_image: str) -> None:
    core.create_namespaced_pod(namespace, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hog"},
        "spec": _pod_spec(testapp_image, ["eat", "4"], resources={"limits": {"memory": "32Mi"}})})

    def status() -> client.V1ContainerStatus | None:
        statuses = core.read_namespaced_pod("hog", namespace).status.container_statuses or []
        return statuses[0] if statuses else None

    first = wait_until(lambda: (s := status()) and s.restart_count >= 1 and s.last_state.terminated and s,
                       120, "the first OOM kill")
    assert first.last_state.terminated.reason == "OOMKilled"
    assert first.last_state.terminated.exit_code == 137
    later = wait_until(lambda: (s := status()) and s.restart_count > first.restart_count and s, 120,
                       "the restart count to rise")
    assert later.last_state.terminated.reason == "OOMKilled"
    # The logs API serves the previous (killed) container's lines. The pod crash-loops within
    # seconds, and the kubelet removes the older dead container each time: ask until one answer
    # comes from a container that is still kept.
    def previous_lines() -> list[str] | None:
        try:
            lines = core.read_namespaced_pod_log("hog", namespace, previous=True).splitlines()
        except client.ApiException:
            return None
        return lines if lines and lines[0].startswith("allocated") else None
    previous = wait_until(previous_lines, 60, "the previous container's logs", interval=0.5)
    assert previous[0] == "allocated 4 MiB"
    assert len(previous) >= 3


def test_failing_readiness_leaves_the_endpointslice(api: client.ApiClient, core: client.CoreV1Api, namespace: str,
                                                    testapp_image: str) -> None:
    _deploy(api, namespace, "flip", testapp_image, ["serve"],
            readinessProbe={"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 1, "failureThreshold": 1})
    pod = _running_pod(core, namespace, "flip")
    discovery = client.DiscoveryV1Api(api)

    def ready_ips() -> set[str] | None:
        slices = discovery.list_namespaced_endpoint_slice(namespace, label_selector="kubernetes.io/service-name=flip")
        return {ip for s in slices.items for e in (s.endpoints or []) if e.conditions.ready for ip in e.addresses}

    assert wait_until(lambda: pod.status.pod_ip in (ready_ips() or set()), 60, "flip's pod in its EndpointSlice")
    # The host reaches pod addresses over the cluster's bridge.
    assert requests.post(f"http://{pod.status.pod_ip}:8080/unready", timeout=5).text == "ok\n"
    wait_until(lambda: pod.status.pod_ip not in (ready_ips() or set()) and True, 60,
               "flip's pod to leave the ready endpoints")
    conditions = {c.type: c.status for c in core.read_namespaced_pod(pod.metadata.name, namespace).status.conditions}
    assert conditions["Ready"] == "False"
    assert "readiness now fails" in core.read_namespaced_pod_log(pod.metadata.name, namespace)
