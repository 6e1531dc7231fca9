"""The dependency graph observed from an application's traces, recorded beside its descriptor (issue 31).

`faultkit apps observe APP --write` records what it saw in apps/<app>/observed-graph.yaml: when,
for how long, from which Jaeger, and each call edge with the number of spans that showed it. The
declared graph (app.yaml's `edges`) decides every fault's scope; a call the traces show and the
descriptor lacks means that scope leaves out services a fault would reach. `apps show` prints the
difference, and lint names, per entry, the callers its target's scope misses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from faultkit.apps.descriptor import AppDescriptor
from faultkit.errors import InputError
from faultkit.workspace import Workspace
from faultkit.yamlio import Located, atomic_write, dump_yaml, load_located

OBSERVED_FILE = "observed-graph.yaml"
Pair = tuple[str, str]  # (caller, callee)


class ObservedEdge(NamedTuple):
    caller: str
    callee: str
    spans: int  # spans that showed the call


@dataclass(frozen=True)
class GraphDiff:
    """The observed graph against the declared one, each side sorted."""

    undeclared: tuple[Pair, ...]  # observed, not declared: the descriptor misses a real call
    unobserved: tuple[Pair, ...]  # declared, never observed in the period


@dataclass(frozen=True)
class RecordedGraph:
    app: str
    observed_at: str  # UTC, ISO 8601, when the observation began
    duration_s: float
    jaeger: str  # the query URL it was read from
    edges: tuple[ObservedEdge, ...]
    services: tuple[str, ...] = ()  # services that had spans
    external: tuple[str, ...] = ()  # peers named by client spans that are no service of the app
    spans: int = 0
    traces: int = 0
    scope: tuple[Pair, ...] = ()  # the resource attributes the traces were read for (key, value), sorted

    @property
    def pairs(self) -> tuple[Pair, ...]:
        return tuple((e.caller, e.callee) for e in self.edges)


def compare(app: AppDescriptor, observed: Iterable[Pair]) -> GraphDiff:
    seen, declared = set(observed), set(app.edges)
    return GraphDiff(tuple(sorted(seen - declared)), tuple(sorted(declared - seen)))


def observed_path(where: Workspace | Path, app: str) -> Path:
    """The file of `app` in a workspace, or in the app's own folder."""
    folder = where.apps_dir / app if isinstance(where, Workspace) else where
    return folder / OBSERVED_FILE


def load_observed(where: Workspace | Path, app: str) -> RecordedGraph | None:
    """The graph recorded for `app` (from a workspace, or the app's folder); None when none is."""
    path = observed_path(where, app)
    if not path.exists() and not path.is_symlink():
        return None
    located = load_located(path)
    return _from_data(located, path, app)


def write_observed(where: Workspace | Path, graph: RecordedGraph) -> Path:
    path = observed_path(where, graph.app)
    head = (f"# The call graph faultkit saw in {graph.app}'s traces: `faultkit apps observe {graph.app} --write`.\n"
            "# `apps show` and lint compare it with app.yaml's edges; observe again to refresh it.\n")
    atomic_write(path, head + dump_yaml(to_data(graph)))
    return path


def to_data(graph: RecordedGraph) -> dict[str, Any]:
    scope = {"scope": dict(graph.scope)} if graph.scope else {}  # a file observed unscoped reads as before
    return {"app": graph.app, "observed_at": graph.observed_at, "duration_s": graph.duration_s,
            "jaeger": graph.jaeger, **scope, "spans": graph.spans, "traces": graph.traces,
            "services": list(graph.services),
            "edges": [{"caller": e.caller, "callee": e.callee, "spans": e.spans} for e in graph.edges],
            "external": list(graph.external)}


def reach(edges: Iterable[Pair], service: str) -> set[str]:
    """`service` and every service that reaches it along `edges`."""
    callers: dict[str, set[str]] = {}
    for a, b in edges:
        callers.setdefault(b, set()).add(a)
    seen, todo = {service}, [service]
    while todo:
        for caller in callers.get(todo.pop(), ()):
            if caller not in seen:
                seen.add(caller)
                todo.append(caller)
    return seen


def missed_callers(app: AppDescriptor, recorded: RecordedGraph, service: str) -> tuple[str, ...]:
    """Services that reach `service` on the declared and observed edges together but are not in its
    declared scope: a fault at `service` reaches them, and its scope leaves them out."""
    return tuple(sorted(reach((*app.edges, *recorded.pairs), service) - set(app.scope(service))))


def missing_edges(app: AppDescriptor, recorded: RecordedGraph, service: str) -> tuple[Pair, ...]:
    """The undeclared observed edges that bring missed_callers(...) into reach of `service`."""
    missed = set(missed_callers(app, recorded, service))
    return tuple(e for e in compare(app, recorded.pairs).undeclared if e[0] in missed)


# ---- reading the file: every value checked, the first problem named with its line ----

_TEXT = ("app", "observed_at", "jaeger")
_COUNTS = ("spans", "traces")
_Bad = Callable[[tuple[str | int, ...], str], InputError]  # (where, what) -> the error naming its line


def _from_data(located: Located, path: Path, app: str) -> RecordedGraph:
    d = located.data

    def bad(where: tuple[str | int, ...], what: str) -> InputError:
        shown = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in where).replace(".[", "[")
        return InputError(f"{path}:{located.line(where)}: {shown or '(file)'}: {what}")

    if not isinstance(d, dict):
        raise bad((), "expected a mapping of app, observed_at, duration_s, jaeger and edges")
    for key in (*_TEXT, "duration_s", "edges"):
        if key not in d:
            raise bad((), f"missing {key!r}; write the file with `faultkit apps observe {app} --write`")
    for key in _TEXT:
        if not isinstance(d[key], str) or not d[key]:
            raise bad((key,), f"expected text, found {d[key]!r}")
    if d["app"] != app:
        raise bad(("app",), f"records {d['app']!r}, but the file is {app}'s")
    duration = d["duration_s"]
    if isinstance(duration, bool) or not isinstance(duration, int | float) or duration < 0:
        raise bad(("duration_s",), f"expected seconds, found {duration!r}")
    for key in _COUNTS:
        _count(d.get(key, 0), (key,), bad)
    lists = {key: _names(d.get(key, []), key, bad) for key in ("services", "external")}
    return RecordedGraph(app=app, observed_at=d["observed_at"], duration_s=float(duration), jaeger=d["jaeger"],
                         edges=_edges(d["edges"], bad), services=lists["services"], external=lists["external"],
                         spans=d.get("spans", 0), traces=d.get("traces", 0), scope=_scope(d.get("scope", {}), bad))


def _count(value: Any, where: tuple[str | int, ...], bad: _Bad) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise bad(where, f"expected a count, found {value!r}")
    return value


def _names(value: Any, key: str, bad: _Bad) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise bad((key,), f"expected a list of names, found {value!r}")
    for i, name in enumerate(value):
        if not isinstance(name, str) or not name:
            raise bad((key, i), f"expected a name, found {name!r}")
    return tuple(value)


def _scope(value: Any, bad: _Bad) -> tuple[Pair, ...]:
    if not isinstance(value, dict):
        raise bad(("scope",), f"expected a mapping of resource attributes to values, found {value!r}")
    for key, v in value.items():
        if not isinstance(key, str) or not key or not isinstance(v, str) or not v:
            raise bad(("scope", key), f"expected text for a resource attribute, found {v!r}")
    return tuple(sorted(value.items()))


def _edges(value: Any, bad: _Bad) -> tuple[ObservedEdge, ...]:
    if not isinstance(value, list):
        raise bad(("edges",), f"expected a list of {{caller, callee, spans}}, found {value!r}")
    out = []
    for i, e in enumerate(value):
        if not isinstance(e, dict) or set(e) != {"caller", "callee", "spans"}:
            raise bad(("edges", i), f"expected {{caller, callee, spans}}, found {e!r}")
        for key in ("caller", "callee"):
            if not isinstance(e[key], str) or not e[key]:
                raise bad(("edges", i, key), f"expected a service name, found {e[key]!r}")
        out.append(ObservedEdge(e["caller"], e["callee"], _count(e["spans"], ("edges", i, "spans"), bad)))
    return tuple(sorted(out))
