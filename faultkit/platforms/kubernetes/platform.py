"""KubernetesPlatform: the Platform protocol on a real cluster, through the official Python client.

Kubernetes specifics of the protocol:

* `up(app)` creates a namespace (default: the app's name; `namespace=` to choose), records it as
  faultkit's (ownership.py), builds the service images (ImageBuilds), hands them to the cluster
  (`loader`, e.g. `tools/cluster/cluster load` or `kind load docker-image`; without one the
  cluster must pull the tags itself), server-side applies the manifests with the built tags and
  waits until every Deployment's rollout is complete by completion.py. `adopt=NAMESPACE` instead
  takes over an app deployed by other tooling: nothing is applied, `down` only forgets it. `existing=True`
  applies the app into a namespace someone else made for it (a campaign Job's, whose service account may
  not create namespaces); `down` deletes what was applied, not the namespace. `images=` names prebuilt
  service images already on the nodes: nothing is built.
* Workloads are Deployments (`cart` or `Deployment/cart`); Services `Service/cart` (container "").
* `patch_field` raises errors.NotReady when the new pods never become ready; the change stays
  applied and the old replicas are stopped (no old replica keeps serving), as locally.
  `rollout` to a build that never gets ready is undone and raises NotReady.
* Instances are pods in slots `<service>-<i>` (instances.py); `endpoint` (the Service's ready pods) and
  `instance_endpoints` (each pod) are loopback port-forwards (forward.py); request counts come from each
  pod's /metrics through the API server's pod proxy, or from PromQL when up was given `prometheus=URL`.
* Direct actions: a node agent DaemonSet in a namespace of its own (actions.py, agent/), started by
  `prepare()`, stopped with that namespace by `down`; a stop reads back that nothing of the action remains.
"""

from __future__ import annotations

import shlex
import time
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from kubernetes.client.exceptions import ApiException

from faultkit import errors
from faultkit.apps.descriptor import AppDescriptor, load_app
from faultkit.apps.signals import NAMESPACE_ATTRIBUTE
from faultkit.errors import PlatformError
from faultkit.images.service import buildable
from faultkit.platforms.base import AppStatus, Build, Instance, LogRecord
from faultkit.platforms.counters import require_exposition
from faultkit.platforms.imagebuilds import ImageBuilds
from faultkit.platforms.kubernetes import apply, objects, preconditions, settings, sites
from faultkit.platforms.kubernetes.actions import SUPPORTED, PodActions, check_supported, chosen, target_of
from faultkit.platforms.kubernetes.agent.daemon import NodeAgent
from faultkit.platforms.kubernetes.connection import Connection, api_error, guarded
from faultkit.platforms.kubernetes.forward import Forwards, ServiceForwards
from faultkit.platforms.kubernetes.images import ClusterImages
from faultkit.platforms.kubernetes.instances import Ledger
from faultkit.platforms.kubernetes.logs import pod_log_source, pod_logs
from faultkit.platforms.kubernetes.metrics import PromQL, pod_requests, request_source, vanished_as_unanswered
from faultkit.platforms.kubernetes.namespaces import Namespaces
from faultkit.platforms.kubernetes.ownership import ADOPTED, CREATED, DOWN_DONE, GIVEN, Ownership, Record
from faultkit.platforms.kubernetes.rollouts import change, patch_template, wait_rollout
from faultkit.platforms.kubernetes.status import app_status
from faultkit.platforms.options import KubernetesOptions
from faultkit.workspace import Workspace


@guarded
class KubernetesPlatform:
    name = "kubernetes"
    checks_in_build = True  # images.build_service runs them in the image (images/ci.py)

    def __init__(self, workspace: Workspace, options: KubernetesOptions | None = None, **fields: Any) -> None:
        """`fields`: a KubernetesOptions's fields, as a shorthand for passing one."""
        opts = options if options is not None else KubernetesOptions(**fields)
        self.workspace, self.options = workspace, opts
        self.prebuilt = dict(opts.images) if opts.images is not None else None
        self.existing, self.owner = opts.existing, Ownership(workspace.state_dir)
        rec = self.owner.read()
        # once up, the recorded cluster and context are the target, whatever the environment says now
        self.conn = Connection(rec.kubeconfig if rec else opts.kubeconfig, rec.context if rec else opts.context)
        self.namespace_arg, self.adopt_arg, self.default_app = opts.namespace, opts.adopt, opts.app
        loader = rec.loader if rec and rec.loader else opts.loader
        self.loader_text, self.loader = loader or "", shlex.split(loader) if loader else None
        self.prometheus_url = opts.prometheus or (rec.prometheus if rec else "")  # a read source: the caller may choose
        self.otlp_endpoint = opts.otlp_endpoint or ""
        self.ledger = Ledger(self.owner.base / "pods.json")
        self._forwards: Forwards | None = None
        self._counted: set[str] = set()  # pods whose series PromQL has answered with counts
        self._services = ServiceForwards(self.conn)  # to query services in the cluster (a stack's)

    # -- lifecycle --------------------------------------------------------------------------
    def up(self, app: str, replicas: int = 1, timeout: float = 90.0) -> None:
        if self.existing and not self.namespace_arg:
            raise errors.UsageError("--existing: name the namespace with --namespace NS")
        rec = self.owner.read()
        if rec is not None:
            raise PlatformError(f"{rec.app} is already up on the kubernetes platform in {rec.target.describe()}; "
                                "run `faultkit down --platform kubernetes` first")
        desc = load_app(self.workspace, app)
        self.conn.check()
        if self.prometheus_url:
            self.promql.check()
        ns = Namespaces(self.conn)
        if self.adopt_arg:
            if (uid := ns.uid(self.adopt_arg)) is None:
                raise PlatformError(f"--adopt {self.adopt_arg}: no such namespace on {self.conn.server}")
            preconditions.check_adopted(self.conn, self.adopt_arg, desc)
            self.owner.write(self.conn.target(self.adopt_arg), app, ADOPTED, uid, {}, self.loader_text,
                             self.prometheus_url)
            return
        name = self.namespace_arg or app
        site_plan = sites.plan(desc, name)  # two sites: a namespace each; faults go to the active one
        if site_plan:
            name = site_plan.namespaces[site_plan.active]
        # before any build: a namespace that exists (or, with --existing, does not) is refused in a second, not 83 s
        given = preconditions.check_given(ns, name) if self.existing else None
        preconditions.check_new(ns, [] if given else list(site_plan.namespaces.values()) if site_plan else [name])
        images = self._images(desc)  # before the namespace: a failing build leaves nothing on the cluster
        uid, mode = (given, GIVEN) if given else (ns.create(name), CREATED)
        self.owner.write(self.conn.target(name), app, mode, uid, images, self.loader_text, self.prometheus_url)
        try:
            if site_plan:
                sites.write(self, site_plan)
            objs = sites.scaled(apply.render(desc, name, images, self.workspace.root, self.otlp_endpoint), replicas)
            apply.server_side_apply(self.conn, objs, apply.field_manager(app))
            # the other sites are applied before waiting, so every site rolls out at once
            others = sites.apply_others(self, desc, site_plan, images, replicas) if site_plan else []
            self.wait_all(desc, name, objs, timeout)
            sites.wait_others(self, desc, others, timeout)
        except BaseException:
            self.down()
            raise

    def _images(self, desc: AppDescriptor) -> dict[str, str]:
        if self.prebuilt is not None:
            missing = [s for s in buildable(desc) if s not in self.prebuilt]
            if missing:
                raise errors.InputError(f"--images: no image named for {', '.join(missing)}; map every service "
                                        "with source to an image the nodes have")
            return {s: self.prebuilt[s] for s in buildable(desc)}
        builds = {service: self.image_builds(desc).build(service) for service in buildable(desc)}
        self.cluster_images.ensure_all({b.location: b.id for b in builds.values()})
        return {service: b.location for service, b in builds.items()}

    def wait_all(self, desc: AppDescriptor, namespace: str, objs: list[dict[str, Any]], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for o in objs:
            if o["kind"] != "Deployment":
                continue
            container = o["spec"]["template"]["spec"]["containers"][0]
            p = wait_rollout(self.conn, namespace, o["metadata"]["name"], container["name"],
                             self.cluster_images.expected(container["image"]), max(1.0, deadline - time.monotonic()))
            if not p.done:
                raise PlatformError(f"Deployment {o['metadata']['name']} in {namespace} did not become available "
                                    f"within {timeout:g}s: {p.failed or '; '.join(p.waiting[:3])}")

    def down(self) -> str:
        rec = self.owner.read()
        self._services.close()
        if self._forwards is not None:
            self._forwards.close()
        if rec is None:
            return "nothing was up"
        self._retire_actions(rec)
        others = sites.down_others(self)
        if rec.mode == CREATED:
            Namespaces(self.conn).delete_owned(rec)
        elif rec.mode == GIVEN:
            Namespaces(self.conn).check_owned(rec)
            apply.delete_applied(self.conn, apply.render(self.descriptor, rec.namespace, rec.images,
                                                         self.workspace.root))
        self.owner.remove()
        self.ledger.path.unlink(missing_ok=True)
        return DOWN_DONE[rec.mode].format(ns=rec.namespace) + (
            f"; the other sites' namespaces {', '.join(others)} are deleted and gone" if others else "")

    def prepare(self) -> None:
        """Start the node agent, so the first action does not wait for it inside its window (or say why it cannot)."""
        self._pod_actions().agent.ensure()

    def is_up(self) -> bool:
        return self.owner.read() is not None

    def app(self) -> str:
        return self.owner.require().app

    def target(self) -> dict[str, str]:
        rec = self.owner.require()
        return {"platform": self.name, "server": rec.server, "context": rec.context, "namespace": rec.namespace,
                "namespace_uid": rec.namespace_uid, **sites.target_fields(self)}

    def at_site(self, state_dir: Path) -> KubernetesPlatform:
        """The same cluster, context, loader and app over another state folder (another site's instance)."""
        return KubernetesPlatform(Workspace(root=self.workspace.root, state_dir=state_dir), KubernetesOptions(
            kubeconfig=self.conn.kubeconfig, context=self.conn.context, loader=self.loader_text or None,
            app=self.default_app))

    def other_sites(self) -> dict[str, KubernetesPlatform]:
        """A two-site app's other sites (observed by the validator, never changed), by site name."""
        return sites.others(self)

    def record(self) -> Record:
        """The app instance's record: where it runs (cluster, context, namespace) and whether faultkit created it."""
        rec = self.owner.require()
        Namespaces(self.conn).check_owned(rec)
        return rec

    # -- state ------------------------------------------------------------------------------
    @cached_property
    def descriptor(self) -> AppDescriptor:
        rec = self.owner.read()
        return load_app(self.workspace, rec.app if rec else self._app_name())

    def _app_name(self) -> str:
        if self.default_app:
            return self.default_app
        raise PlatformError("nothing is up on the kubernetes platform and no app was given; run `faultkit up` first")

    def _pods(self, service: str, selector: str | None = None) -> tuple[str, list[dict[str, Any]]]:
        ns, spec = self.owner.require().namespace, self.descriptor.service(service)
        sel = selector or objects.workload_selector(self.conn, ns, spec.workload_kind, spec.workload)
        try:
            return ns, objects.items(self.conn.core.list_namespaced_pod, ns, label_selector=sel)
        except ApiException as e:
            raise api_error(f"list pods of {service}", e) from None

    def status(self) -> AppStatus:
        return app_status(self)

    def instances(self, service: str | None = None) -> list[Instance]:
        by_service = {service: self._pods(service)[1]} if service else objects.pods_of_workloads(
            self.conn, self.owner.require().namespace,
            {s.name: (s.workload_kind, s.workload) for s in self.descriptor.services})
        out: list[Instance] = []
        for name, pods in by_service.items():
            out += self.ledger.observe(name, pods, self.descriptor.service(name).containers[0],
                                       self.cluster_images.build_of)
        return out

    def ready(self, service: str) -> bool:
        insts = self.instances(service)
        return bool(insts) and all(i.ready for i in insts)

    def _slot_pods(self, service: str) -> dict[str, dict[str, Any]]:
        ns, pods = self._pods(service)
        self.ledger.observe(service, pods, self.descriptor.service(service).containers[0], self.cluster_images.build_of)
        by_uid = {p["metadata"]["uid"]: p for p in pods if not p["metadata"].get("deletionTimestamp")}
        out = {}
        for inst in {f"{service}-{i}" for i in range(len(pods) + 1)}:
            uid = self.ledger.pod_of(service, inst)
            if uid in by_uid:
                out[inst] = by_uid[uid]
        return out

    def _port(self, service: str, port: int | None = None) -> int:
        spec = self.descriptor.service(service)
        return port or (spec.ports[0].port if spec.ports else 80)

    @property
    def forwards(self) -> Forwards:
        if self._forwards is None:
            self._forwards = Forwards(self.conn, self.owner.require().namespace)
        return self._forwards

    def endpoint(self, service: str, port: int | None = None) -> str:
        # each forwarded connection lists the pods; the workload's selector, which cannot change, is read once
        spec, ns = self.descriptor.service(service), self.owner.require().namespace
        selector = cache(lambda: objects.workload_selector(self.conn, ns, spec.workload_kind, spec.workload))
        return self.forwards.to_ready(service, self._port(service, port), lambda: self._pods(service, selector())[1])

    def instance_endpoints(self, service: str) -> dict[str, str]:
        return self.forwards.to_slots(self._port(service), lambda: self._slot_pods(service))

    def request_counts(self, service: str) -> dict[str, dict[str, float] | None]:
        """Each instance's cumulative requests by status (None: it did not answer), via the pod proxy or,
        when up was given --prometheus, PromQL."""
        ns, signal = self.owner.require().namespace, self.descriptor.signals.requests
        slots = sorted(self._slot_pods(service).items())
        if self.prometheus_url:
            by_pod = vanished_as_unanswered(
                self.promql.requests_by_pod(ns, [p["metadata"]["name"] for _, p in slots], signal), self._counted)
            return {inst: by_pod.get(p["metadata"]["name"]) for inst, p in slots}
        require_exposition(signal, "the API server's pod proxy (no --prometheus given)")
        port = self._port(service)
        return {inst: pod_requests(self.conn, ns, p["metadata"]["name"], port, signal) for inst, p in slots}

    def signal_sources(self) -> dict[str, dict[str, object]]:
        return {"requests": request_source(self.prometheus_url, self.owner.require().namespace,
                                           self.descriptor.signals.requests),
                "logs": pod_log_source(self.descriptor.log_format)}

    def telemetry_scope(self) -> dict[str, str]:
        return {NAMESPACE_ATTRIBUTE: self.owner.require().namespace}  # each pod's, as apply.py sets it

    @cached_property
    def promql(self) -> PromQL:
        return PromQL(self.query_address(self.prometheus_url, "--prometheus"), name=self.prometheus_url)

    def query_address(self, url: str, option: str = "the URL") -> str:
        return self._services.address(url, option)

    # -- builds and rollouts ----------------------------------------------------------------
    def image_builds(self, desc: AppDescriptor | None = None) -> ImageBuilds:
        return ImageBuilds(self.workspace, desc or self.descriptor)

    @cached_property
    def cluster_images(self) -> ClusterImages:
        return ClusterImages(self.conn, self.loader, self.owner.base / "images.json")

    def build(self, service: str, source_root: str | None = None) -> Build:
        b = self.image_builds().build(service, source_root)
        self.cluster_images.ensure(b.location, b.id)
        return b

    def build_contains(self, build_id: str, text: str) -> bool:
        return self.image_builds().build_contains(build_id, text)

    def builds(self, service: str) -> list[Build]:
        return self.image_builds().builds(service)

    def rollout(self, service: str, build_id: str, timeout: float = 60.0) -> None:
        rec = self.record()
        spec = self.descriptor.service(service)
        container = spec.containers[0]
        location = self.cluster_images.location_of(build_id) or next(
            (b.location for b in self.builds(service) if b.id == build_id), None)
        if location is None:
            raise errors.InputError(f"no build {build_id} of {service}; build it first")
        self.cluster_images.ensure(location, build_id)
        dep = objects.deployment(self.conn, rec.namespace, spec.workload)
        old_image = next(c["image"] for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == container)
        manager = apply.field_manager(rec.app)

        def set_image(image: str) -> None:
            body = {"spec": {"template": {"spec": {"containers": [{"name": container, "image": image}]}}}}
            patch_template(self.conn, rec.namespace, spec.workload, body, manager)

        _, pods = self._pods(service)
        self.ledger.retire(service, [p["metadata"]["uid"] for p in pods])
        change(self.conn, rec.namespace, spec.workload, container, lambda: set_image(location),
               lambda: set_image(old_image), self.cluster_images.expected(location), timeout,
               self.cluster_images.expected(old_image))

    # -- manifest settings ------------------------------------------------------------------
    def read_field(self, workload: str, container: str, path: str) -> str | None:
        return settings.read(self.conn, self.record().namespace, workload, container, path)

    def patch_field(self, workload: str, container: str, path: str, value: str | None, timeout: float = 60.0) -> None:
        rec = self.record()
        if not workload.startswith("Service/"):
            service = next((s.name for s in self.descriptor.services if s.workload == settings.bare(workload)), None)
            if service:
                _, pods = self._pods(service)
                self.ledger.retire(service, [p["metadata"]["uid"] for p in pods])
        settings.patch(self.conn, rec.namespace, workload, container, path, value, timeout,
                       apply.field_manager(rec.app))

    # -- observation ------------------------------------------------------------------------
    def logs(self, service: str, since: float, until: float | None = None) -> list[LogRecord]:
        ns = self.owner.require().namespace
        container = self.descriptor.service(service).containers[0]
        out: list[LogRecord] = []
        try:
            for inst, pod in self._slot_pods(service).items():
                out += pod_logs(self.conn, ns, pod, container, service, inst, since, until, self.descriptor.log_format)
        except ApiException as e:
            raise api_error(f"read logs of {service}", e) from None
        return sorted(out, key=lambda r: r.ts)

    # -- direct interventions (actions.py, by the node agent of agent/) -----------------------
    def _pod_actions(self, rec: Record | None = None) -> PodActions:
        agent = NodeAgent(self.conn, self.cluster_images, rec or self.record(), self.owner.base)
        return PodActions(agent, self.owner.base / "actions.json")

    def actions(self) -> frozenset[str]:
        return SUPPORTED

    def start_action(self, action: str, service: str, params: dict[str, object], mode: str | None = None) -> str:
        check_supported(action)
        spec = self.descriptor.service(service)
        slots = self._slot_pods(service)
        targets = [target_of(i, slots[i], spec.containers[0], tuple(p.port for p in spec.ports))
                   for i in chosen(slots, action, dict(params), mode)]
        return self._pod_actions().start(action, service, targets, dict(params))

    def stop_action(self, handle: str) -> None:
        self._pod_actions().stop(handle)

    def action_leftovers(self, handle: str) -> list[str]:
        return self._pod_actions().leftovers(handle) if self.is_up() else []

    def active_actions(self) -> list[str]:
        return self._pod_actions().handles() if self.is_up() else []

    def _retire_actions(self, rec: Record) -> None:
        """Before `down`: stop every action and delete the agent's namespace. In a namespace faultkit
        created, deleting the pods takes whatever an action left there with them, so a failing stop
        does not keep the app up; in an adopted one it does."""
        acts = self._pod_actions(rec)
        try:
            acts.stop_all()
        except errors.PlatformError:
            if rec.mode != CREATED:
                raise
        acts.agent.remove()
        acts.path.unlink(missing_ok=True)
