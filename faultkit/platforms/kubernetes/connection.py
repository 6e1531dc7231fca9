"""Which cluster: a kubeconfig and context as kubectl reads them, or the in-cluster service account.

The Connection is plain data, recorded with the app instance (ownership.py) so that later commands,
and `recover`, talk to the same cluster and context the app was brought up on.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import HTTPError

from faultkit.errors import PlatformError

IN_CLUSTER = "in-cluster"
T = TypeVar("T")


@dataclass(frozen=True)
class ClusterTarget:
    """Where changes go: the recorded identity of a cluster, a context and a namespace."""

    kubeconfig: str  # a file, or "in-cluster"
    context: str
    server: str
    namespace: str

    def describe(self) -> str:
        return f"namespace {self.namespace} on {self.server} (context {self.context})"


class Connection:
    """API clients for one cluster. `kubeconfig=None` follows KUBECONFIG / ~/.kube/config, then in-cluster."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None) -> None:
        self.kubeconfig_arg, self.context_arg = kubeconfig, context

    @cached_property
    def api(self) -> client.ApiClient:
        path = self.kubeconfig_arg or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
        no_file = not self.kubeconfig_arg and not os.path.exists(path.split(os.pathsep)[0])
        if self.kubeconfig_arg == IN_CLUSTER or (no_file and os.environ.get("KUBERNETES_SERVICE_HOST")):
            try:
                config.load_incluster_config()
            except ConfigException as e:
                raise PlatformError(f"in-cluster config: {e}; pass --kubeconfig FILE") from None
            self._where = (IN_CLUSTER, IN_CLUSTER)
            return client.ApiClient()
        try:
            api = config.new_client_from_config(config_file=path, context=self.context_arg)
            _, active = config.list_kube_config_contexts(config_file=path)
        except (ConfigException, OSError) as e:
            raise PlatformError(f"kubeconfig {path}: {e}; pass --kubeconfig FILE (and --context NAME)") from None
        self._where = (os.path.abspath(path), self.context_arg or str(active.get("name", "")))
        return api

    @property
    def kubeconfig(self) -> str:
        _ = self.api
        return self._where[0]

    @property
    def context(self) -> str:
        _ = self.api
        return self._where[1]

    @property
    def server(self) -> str:
        return str(self.api.configuration.host)

    def target(self, namespace: str) -> ClusterTarget:
        return ClusterTarget(self.kubeconfig, self.context, self.server, namespace)

    @cached_property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)

    @cached_property
    def core_once(self) -> client.CoreV1Api:
        """The core API asked once: a scrape that times out has its answer (the pod did not answer),
        where the client's default of three more tries holds a sample four times as long."""
        settings = copy.copy(self.api.configuration)
        settings.retries = False
        return client.CoreV1Api(client.ApiClient(settings))

    @cached_property
    def apps(self) -> client.AppsV1Api:
        return client.AppsV1Api(self.api)

    @cached_property
    def discovery(self) -> client.DiscoveryV1Api:
        return client.DiscoveryV1Api(self.api)

    def check(self) -> str:
        """The server's version, or PlatformError when no API server answers."""
        try:
            info: Any = client.VersionApi(self.api).get_code(_request_timeout=10)
        except (ApiException, HTTPError, OSError) as e:
            raise PlatformError(f"the Kubernetes API server at {self.server} does not answer ({_short(e)}); "
                                "check the cluster and --kubeconfig/--context") from None
        return str(info.git_version)


def guarded(cls: type[T]) -> type[T]:
    """Every public method of `cls` turns a failure to reach the API server (or an API error nobody
    handled) into one PlatformError line, so a cluster that goes away is an error, not a traceback."""
    for name, fn in list(vars(cls).items()):
        if name.startswith("_") or not callable(fn):
            continue
        setattr(cls, name, _guard(name, fn))
    return cls


def _guard(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except (HTTPError, ApiException, OSError) as e:
            server = getattr(getattr(self, "conn", None), "server", "the API server")
            raise PlatformError(f"kubernetes platform, {name}: {_short(e)} ({server}); check the cluster "
                                "(its API server must answer), then retry") from None
    return wrapper


def api_error(what: str, e: Exception) -> PlatformError:
    """One line for an API failure: what faultkit was doing and what the server said."""
    return PlatformError(f"{what}: {_short(e)}")


def _short(e: Exception) -> str:
    if isinstance(e, ApiException):
        reason = e.reason or ""
        try:
            import json

            reason = json.loads(e.body or "{}").get("message", reason)
        except (ValueError, AttributeError):
            pass
        return f"HTTP {e.status}: {reason}"
    return " ".join(str(e).split())[:200]
