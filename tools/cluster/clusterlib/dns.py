"""CoreDNS as a Deployment in kube-system behind the kube-dns Service, serving cluster.local."""

from __future__ import annotations

from typing import Any

from kubernetes import client, utils

from .layout import CLUSTER_DOMAIN, COREDNS_IMAGE, DNS_SERVICE_IP

# No `forward`: no name outside the cluster can be resolved from this machine's pods anyway, and a
# forward to the host's resolver would only add timeouts.
COREFILE = f""".:53 {{
    errors
    health {{
        lameduck 2s
    }}
    ready
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }}
    prometheus :9153
    cache 30
    loadbalance
    reload
}}
"""

LABELS = {"k8s-app": "kube-dns"}


def objects() -> list[dict[str, Any]]:
    meta = {"name": "coredns", "namespace": "kube-system"}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "system:coredns"},
         "rules": [{"apiGroups": [""], "resources": ["endpoints", "services", "pods", "namespaces"],
                    "verbs": ["list", "watch"]},
                   {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "system:coredns"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:coredns"},
         "subjects": [{"kind": "ServiceAccount", "name": "coredns", "namespace": "kube-system"}]},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"Corefile": COREFILE}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {**meta, "labels": LABELS},
         "spec": {"replicas": 1, "selector": {"matchLabels": LABELS},
                  "template": {"metadata": {"labels": LABELS}, "spec": {
                      "serviceAccountName": "coredns", "dnsPolicy": "Default",
                      "priorityClassName": "system-cluster-critical",
                      "containers": [{
                          "name": "coredns", "image": COREDNS_IMAGE, "imagePullPolicy": "Never",
                          "args": ["-conf", "/etc/coredns/Corefile"],
                          "ports": [{"name": "dns", "containerPort": 53, "protocol": "UDP"},
                                    {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                                    {"name": "metrics", "containerPort": 9153, "protocol": "TCP"}],
                          "resources": {"requests": {"cpu": "50m", "memory": "30Mi"}, "limits": {"memory": "170Mi"}},
                          "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181}, "periodSeconds": 2},
                          "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}, "initialDelaySeconds": 30},
                          "volumeMounts": [{"name": "config", "mountPath": "/etc/coredns", "readOnly": True}],
                      }],
                      "volumes": [{"name": "config", "configMap": {"name": "coredns"}}],
                  }}}},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": LABELS},
         "spec": {"selector": LABELS, "clusterIP": DNS_SERVICE_IP,
                  "ports": [{"name": "dns", "port": 53, "protocol": "UDP"},
                            {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
                            {"name": "metrics", "port": 9153, "protocol": "TCP"}]}},
    ]


def _exists(api: client.ApiClient, obj: dict[str, Any]) -> bool:
    name, kind = obj["metadata"]["name"], obj["kind"]
    core, rbac, apps = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api), client.AppsV1Api(api)
    read = {
        "ServiceAccount": lambda: core.read_namespaced_service_account(name, "kube-system"),
        "ConfigMap": lambda: core.read_namespaced_config_map(name, "kube-system"),
        "Service": lambda: core.read_namespaced_service(name, "kube-system"),
        "Deployment": lambda: apps.read_namespaced_deployment(name, "kube-system"),
        "ClusterRole": lambda: rbac.read_cluster_role(name),
        "ClusterRoleBinding": lambda: rbac.read_cluster_role_binding(name),
    }[kind]
    try:
        read()
    except client.ApiException as err:
        if err.status == 404:
            return False
        raise
    return True


def apply(api: client.ApiClient) -> None:
    """Create what is missing; objects a kept state already holds stay as they are."""
    for obj in objects():
        if not _exists(api, obj):
            utils.create_from_dict(api, obj)


def available(api: client.ApiClient) -> bool:
    status = client.AppsV1Api(api).read_namespaced_deployment_status("coredns", "kube-system").status
    return bool(status.available_replicas)
