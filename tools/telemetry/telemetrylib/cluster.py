"""The stack on the one-node cluster of tools/cluster: the same Jaeger and Prometheus, in a namespace
of their own (`telemetry`), from images made here (nothing is pulled).

Each image is one layer written by the cluster tool's image writer: the binary (the Jaeger this
tool builds, Debian's Prometheus) and the shared objects `ldd` names for it, imported into the
cluster's containerd. Jaeger runs jaeger.yaml listening on every interface of its pod on the usual
ports; Prometheus scrapes its exporter every second. Nothing is exposed outside the cluster: pods
export to `jaeger.<namespace>.svc:4318`, and faultkit reads Prometheus and Jaeger through the API
server (`k8s://NAMESPACE/SERVICE:PORT`, a port-forward).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import build, configs, rules
from .layout import JAEGER_CONFIG, TOOL_DIR, Layout

sys.path.insert(0, str(TOOL_DIR.parent / "cluster"))

from clusterlib import images as cluster_images  # noqa: E402
from clusterlib.layout import layout_from_env as cluster_layout  # noqa: E402

# the agent sees this namespace and the endpoint every pod exports to: names any cluster could have
NAMESPACE = "telemetry"
MANAGED = {"app.kubernetes.io/managed-by": "tools-telemetry"}  # `down` deletes only a namespace so labelled
PORTS = {"otlp_grpc": 4317, "otlp_http": 4318, "jaeger_query": 16686, "jaeger_query_grpc": 16685,
         "metrics": 8889, "collector_telemetry": 8888, "prometheus": 9090}
PORT_NAMES = {"otlp_grpc": "otlp-grpc", "otlp_http": "otlp-http", "jaeger_query": "query",
              "jaeger_query_grpc": "query-grpc", "metrics": "metrics", "prometheus": "http"}
READY_TIMEOUT_S = 120.0


class ClusterStackError(Exception):
    """A failure `telemetry cluster ...` reports as one line and exit 1."""


@dataclass(frozen=True)
class ClusterUp:
    images: dict[str, str]  # name -> the image ref the pods run
    imported: tuple[str, ...]  # of those, the ones this run put into containerd
    seconds: float


def shared_objects(binary: Path) -> dict[str, Path]:
    """The files a dynamically linked binary loads (`ldd`), by the path it loads them from."""
    done = subprocess.run(["ldd", str(binary)], capture_output=True, text=True)
    if done.returncode != 0:  # a static binary: "not a dynamic executable"
        return {}
    out = {}
    for line in done.stdout.splitlines():
        words = line.split()
        path = words[2] if len(words) > 2 and words[1] == "=>" else words[0] if words else ""
        if path.startswith("/"):
            out[path.lstrip("/")] = Path(path)
    return out


def image_files(name: str, binary: Path) -> tuple[str, dict[str, Path]]:
    """(tag, files) of the image holding `binary` at /<name> and what it loads: the tag is named by
    the files' content, so a new binary or library is a new image."""
    files = {name: binary, **shared_objects(binary)}
    digest = hashlib.sha256()
    for path, source in sorted(files.items()):
        digest.update(path.encode() + b"\0" + hashlib.sha256(source.read_bytes()).digest())
    return f"faultkit.local/telemetry-{name}:{digest.hexdigest()[:16]}", files


def image_archive(tag: str, name: str, files: dict[str, Path]) -> bytes:
    """The docker-archive of that image, as containerd imports it."""
    return cluster_images.docker_archive_of(tag, files, [f"/{name}"], f"faultkit telemetry: {name}")


def jaeger_yaml() -> str:
    """jaeger.yaml with this stack's values in place of its ${env:...} (every interface of the pod,
    the usual ports), and without its comments: the agent may read the ConfigMap."""
    text = JAEGER_CONFIG.read_text().replace("${env:FAULTKIT_TELEMETRY_HOST}", "0.0.0.0")
    for name, port in PORTS.items():
        text = text.replace(f"${{env:{configs.port_variable(name)}}}", str(port))
    text = yaml.safe_dump(yaml.safe_load(text), sort_keys=False)
    if "${env:" in text:
        raise ClusterStackError(f"{JAEGER_CONFIG.name}: a variable the cluster stack does not set is left")
    return text


def manifests(jaeger_image: str, prometheus_image: str, rule_packs: dict[str, str] | None = None
              ) -> list[dict[str, Any]]:
    """Every object of the stack, in the order they are applied; `rule_packs` (rules.packs' output)
    in the ConfigMap Prometheus reads its rules from, their digest on its pod template, so a change
    of packs rolls Prometheus and it reads them anew."""
    packs = dict(rule_packs or {})
    meta = {"namespace": NAMESPACE}
    prometheus_yml = yaml.safe_dump({
        "global": {"scrape_interval": configs.SCRAPE_INTERVAL, "evaluation_interval": configs.SCRAPE_INTERVAL},
        # the alerts' rule pack goes into the prometheus-rules ConfigMap; `POST /-/reload` reads it
        "rule_files": ["/etc/prometheus/rules/*.yml", "/etc/prometheus/rules/*.yaml"],
        "scrape_configs": [{"job_name": "otel-collector", "honor_labels": True,
                            "static_configs": [{"targets": [f"jaeger.{NAMESPACE}.svc:{PORTS['metrics']}"]}]}],
    }, sort_keys=False)

    def deployment(name: str, image: str, args: list[str], env: list[dict[str, str]], ports: dict[str, int],
                   volumes: dict[str, tuple[dict[str, Any], str]], ready_path: str, ready_port: int,
                   annotations: dict[str, str] | None = None) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, **meta},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}}, "template": {
                "metadata": {"labels": {"app": name}, "annotations": annotations or {}},
                "spec": {
                    "containers": [{
                        "name": name, "image": image, "imagePullPolicy": "Never", "args": args, "env": env,
                        "ports": [{"name": PORT_NAMES[p], "containerPort": n} for p, n in ports.items()],
                        # ready fast, and kept ready on a busy node: queries reach only ready pods
                        # (a 1 s probe timed out thrice in a row, and the stack stopped answering)
                        "readinessProbe": {"httpGet": {"path": ready_path, "port": ready_port}, "periodSeconds": 1,
                                           "timeoutSeconds": 5, "failureThreshold": 30},
                        "volumeMounts": [{"name": v, "mountPath": at} for v, (_, at) in volumes.items()],
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                    }],
                    "volumes": [{"name": v, **source} for v, (source, _) in volumes.items()],
                }}}}

    def service(name: str, ports: dict[str, int]) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, **meta},
                "spec": {"selector": {"app": name}, "ports": [
                    {"name": PORT_NAMES[p], "port": n, "targetPort": n} for p, n in ports.items()]}}

    jaeger_ports = {n: PORTS[n] for n in ("otlp_grpc", "otlp_http", "jaeger_query", "jaeger_query_grpc", "metrics")}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": MANAGED}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "jaeger", **meta},
         "data": {"jaeger.yaml": jaeger_yaml()}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "prometheus", **meta},
         "data": {"prometheus.yml": prometheus_yml}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "prometheus-rules", **meta}, "data": packs},
        deployment("jaeger", jaeger_image, ["--config", "file:/etc/jaeger/jaeger.yaml"], [], jaeger_ports,
                   {"config": ({"configMap": {"name": "jaeger"}}, "/etc/jaeger")},
                   "/api/services", PORTS["jaeger_query"]),
        service("jaeger", jaeger_ports),
        deployment("prometheus", prometheus_image,
                   ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/data",
                    f"--storage.tsdb.retention.time={configs.RETENTION}",
                    f"--web.listen-address=0.0.0.0:{PORTS['prometheus']}", "--web.enable-lifecycle"],
                   [], {"prometheus": PORTS["prometheus"]},
                   {"config": ({"configMap": {"name": "prometheus"}}, "/etc/prometheus"),
                    "rules": ({"configMap": {"name": "prometheus-rules"}}, "/etc/prometheus/rules"),
                    "data": ({"emptyDir": {}}, "/data")},
                   "/-/ready", PORTS["prometheus"], {"rules-digest": rules.digest(packs)}),
        service("prometheus", {"prometheus": PORTS["prometheus"]}),
    ]


def _api() -> Any:
    from kubernetes import config

    kubeconfig = cluster_layout().admin_kubeconfig
    if not kubeconfig.is_file():
        raise ClusterStackError("no cluster: start it with `tools/cluster/cluster up`")
    return config.new_client_from_config(config_file=str(kubeconfig))


def up(layout: Layout, environ: dict[str, str], rule_packs: dict[str, str] | None = None) -> ClusterUp:
    """Make and import the images (when containerd lacks them), apply the stack with `rule_packs`, wait
    until it is available."""
    from kubernetes.dynamic import DynamicClient

    start = time.monotonic()
    api = _api()
    jaeger = build.ensure_built(layout, environ).binary
    where = cluster_layout()
    have = cluster_images.present(where)
    images, imported = {}, []
    for name, binary in (("jaeger", jaeger), ("prometheus", Path(configs.prometheus_binary()))):
        tag, files = image_files(name, binary)
        if tag not in have:
            cluster_images.import_archive(where, image_archive(tag, name, files))
            imported.append(tag)
        images[name] = tag
    dyn = DynamicClient(api)
    for body in manifests(images["jaeger"], images["prometheus"], rule_packs):
        resource = dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"])
        dyn.server_side_apply(resource, body=body, namespace=body["metadata"].get("namespace"),
                              field_manager="tools-telemetry", force_conflicts=True)
    _wait_available(api, ("jaeger", "prometheus"))
    return ClusterUp(images, tuple(imported), time.monotonic() - start)


def _wait_available(api: Any, names: tuple[str, ...]) -> None:
    from kubernetes import client

    apps = client.AppsV1Api(api)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        waiting = [n for n in names if not _rolled_out(apps.read_namespaced_deployment(n, NAMESPACE))]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise ClusterStackError(f"{', '.join(waiting)} not available in namespace {NAMESPACE} after "
                                    f"{READY_TIMEOUT_S:g}s; see `kubectl -n {NAMESPACE} describe pods`")
        time.sleep(0.5)


def _rolled_out(d: Any) -> bool:
    """Every replica runs the current template and is available (a change of rule packs rolls Prometheus)."""
    want, st = d.spec.replicas, d.status
    return bool((st.observed_generation or 0) >= d.metadata.generation and (st.updated_replicas or 0) == want
                and (st.available_replicas or 0) == want and (st.replicas or 0) == want)


def status() -> dict[str, bool]:
    """Each Deployment of the stack: available or not (not there counts as not)."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    apps = client.AppsV1Api(_api())
    out = {}
    for name in ("jaeger", "prometheus"):
        try:
            out[name] = bool(apps.read_namespaced_deployment(name, NAMESPACE).status.available_replicas)
        except ApiException as e:
            if e.status != 404:
                raise
            out[name] = False
    return out


def down(timeout: float = 120.0) -> bool:
    """Delete the namespace and wait until it is gone; False when there was none."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    core = client.CoreV1Api(_api())
    try:
        labels = core.read_namespace(NAMESPACE).metadata.labels or {}
    except ApiException as e:
        if e.status == 404:
            return False
        raise
    if any(labels.get(k) != v for k, v in MANAGED.items()):
        raise ClusterStackError(f"namespace {NAMESPACE} was not made by `telemetry cluster up`; left as it is")
    core.delete_namespace(NAMESPACE)
    deadline = time.monotonic() + timeout
    while True:
        try:
            core.read_namespace(NAMESPACE)
        except ApiException as e:
            if e.status == 404:
                return True
            raise
        if time.monotonic() > deadline:
            raise ClusterStackError(f"namespace {NAMESPACE} still terminating after {timeout:g}s")
        time.sleep(0.5)


def env_lines() -> list[str]:
    """Exports pointing faultkit's kubernetes platform at the stack."""
    return [f"export FAULTKIT_OTLP_ENDPOINT=http://jaeger.{NAMESPACE}.svc:{PORTS['otlp_http']}",
            f"export FAULTKIT_PROMETHEUS=k8s://{NAMESPACE}/prometheus:{PORTS['prometheus']}",
            f"export FAULTKIT_ALERTS=k8s://{NAMESPACE}/prometheus:{PORTS['prometheus']}",
            f"export FAULTKIT_JAEGER=k8s://{NAMESPACE}/jaeger:{PORTS['jaeger_query']}"]
