"""Creating, checking and deleting the one namespace faultkit owns; refusing every other."""

from __future__ import annotations

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from faultkit.errors import PlatformError
from faultkit.platforms.kubernetes import watching
from faultkit.platforms.kubernetes.connection import Connection, api_error
from faultkit.platforms.kubernetes.ownership import Record, check_namespace


class Namespaces:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def uid(self, name: str) -> str | None:
        try:
            return str(self.conn.core.read_namespace(name).metadata.uid)
        except ApiException as e:
            if e.status == 404:
                return None
            raise api_error(f"read namespace {name}", e) from None

    def create(self, name: str) -> str:
        """Create `name` and return its uid; refuse a namespace that already exists (it is someone else's)."""
        if self.uid(name) is not None:
            raise PlatformError(f"namespace {name!r} already exists on {self.conn.server} and faultkit did not create "
                                "it; choose another with --namespace, or hand it over with --adopt "
                                f"{name} (faultkit then only patches and restores what a fault names)")
        try:
            ns = self.conn.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
        except ApiException as e:
            raise api_error(f"create namespace {name}", e) from None
        self._wait_account(name)
        return str(ns.metadata.uid)

    def _wait_account(self, name: str, timeout: float = 60.0) -> None:
        """Pods are refused until the service-account controller has made `default`."""
        def made() -> bool:
            try:
                self.conn.core.read_namespaced_service_account("default", name)
                return True
            except ApiException as e:
                if e.status != 404:
                    raise api_error(f"read the default ServiceAccount of {name}", e) from None
                return False

        if not watching.until(self.conn, name, ("serviceaccounts",), made, bool, timeout):
            raise PlatformError(f"namespace {name}: no default ServiceAccount after {timeout:g}s; is the "
                                "controller-manager running?")

    def check_owned(self, rec: Record) -> None:
        check_namespace(rec, rec.namespace, self.uid(rec.namespace))

    def delete_owned(self, rec: Record, timeout: float = 180.0) -> None:
        """Delete the recorded namespace (only if it is still the one faultkit created) and wait until it is gone."""
        uid = self.uid(rec.namespace)
        if uid is None:
            return
        check_namespace(rec, rec.namespace, uid)
        try:
            self.conn.core.delete_namespace(rec.namespace, body=client.V1DeleteOptions(
                preconditions=client.V1Preconditions(uid=rec.namespace_uid)))
        except ApiException as e:
            if e.status != 404:
                raise api_error(f"delete namespace {rec.namespace}", e) from None
        if not watching.until(self.conn, rec.namespace, ("namespace",),
                              lambda: self.uid(rec.namespace) != rec.namespace_uid, bool, timeout):
            raise PlatformError(f"namespace {rec.namespace} is still terminating after {timeout:g}s; "
                                "check `kubectl get ns`, then run `faultkit down` again")
