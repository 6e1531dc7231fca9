"""Semantic rules: an entry against its application's descriptor and manifests, and the action vocabulary."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from faultkit.apps.descriptor import suggest
from faultkit.apps.manifests import Doc, find_container, get_field
from faultkit.apps.observed_graph import OBSERVED_FILE, missed_callers, missing_edges
from faultkit.apps.references import loaded_from
from faultkit.catalog.config_rules import below_request, kind_mismatch, refusal
from faultkit.catalog.model import ConfigChange, Entry
from faultkit.catalog.rules.context import Context
from faultkit.catalog.vocab import ACTIONS
from faultkit.errors import FaultkitError


def check_target(ctx: Context, e: Entry) -> Iterator[tuple[str, str]]:
    if e.app not in ctx.app_names:
        yield "app", f"{e.app!r} is not an application of this catalog{suggest(e.app, ctx.app_names)}"
        return
    app = ctx.app(e.app)
    names = app.service_names
    if e.target.service not in names:
        yield "target.service", f"{e.target.service!r} is not a service of {app.name}{suggest(e.target.service, names)}"
        return
    spec = app.service(e.target.service)
    if e.target.workload and e.target.workload not in spec.workloads:
        shown = " or ".join(map(repr, spec.workloads))
        yield "target.workload", f"{e.target.service} runs as workload {shown}, not {e.target.workload!r}"
    if e.target.container and e.target.container not in spec.containers:
        yield (
            "target.container",
            f"{e.target.container!r} is not a container of {spec.workload} ({', '.join(spec.containers)})",
        )
    if e.probe.service not in names:
        yield "probe.service", f"{e.probe.service!r} is not a service of {app.name}{suggest(e.probe.service, names)}"
    bound = e.probe.expect_latency_ms
    if bound is not None and bound >= e.probe.timeout_s * 1000:
        # an attempt is cut off at the timeout, so a bound at or past it can never be what fails it
        yield (
            "probe.expect_latency_ms",
            f"{bound} ms is not below the probe's timeout ({e.probe.timeout_s:g} s); lower it, or raise timeout_s",
        )
    computed = set(app.scope(e.target.service))
    if e.target.service not in e.scope:
        yield "scope", f"the scope must include the target {e.target.service!r}"
    for i, s in enumerate(e.scope):
        if s not in computed:
            yield (
                f"scope[{i}]",
                f"{s!r} does not reach {e.target.service} through dependency edges; "
                f"scope may hold {', '.join(sorted(computed))}",
            )
    if e.log and e.log.service not in {e.target.service, *app.callers(e.target.service)}:
        yield (
            "log.service",
            (
                f"{e.log.service!r} is neither {e.target.service} nor a direct dependant of it "
                f"({', '.join(app.callers(e.target.service)) or 'none'})"
            ),
        )


def check_observed(ctx: Context, e: Entry) -> Iterator[tuple[str, str]]:
    """The target's scope against the call graph recorded from traces: a caller that reaches the
    target only through a call the descriptor does not declare is left out of the scope computed
    from the declared edges (issue 31). An error, as every other scope problem is: the scope is the
    ground truth of what a fault affects."""
    if e.app not in ctx.app_names:
        return
    app = ctx.app(e.app)
    if e.target.service not in app.service_names:
        return  # check_target says so
    recorded = ctx.observed(e.app)
    missed = () if recorded is None else missed_callers(app, recorded, e.target.service)
    if recorded is None or not missed:
        return
    edges = ", ".join(f"{a} -> {b}" for a, b in missing_edges(app, recorded, e.target.service))
    yield (
        "scope",
        f"apps/{app.name}/{OBSERVED_FILE} shows {edges}, which app.yaml does not declare, so the scope of "
        f"{e.target.service} leaves out callers that reach it: {', '.join(missed)}; declare the calls in app.yaml",
    )


def check_config(ctx: Context, e: Entry) -> Iterator[tuple[str, ...]]:
    if not e.config or e.app not in ctx.app_names:
        return
    c = e.config
    app = ctx.app(e.app)
    if app.upstream is not None and not app.manifests_dir.is_dir():
        # the manifests are upstream's, recorded by digest: where no copy is at hand (a CI checkout,
        # a reviewer's), the change is checked where one is, as validate does
        yield "config.workload", (f"not checked against the manifests: {app.name}'s are upstream's and no copy is "
                                  f"in {app.manifests_dir.relative_to(app.root.parent.parent)} "
                                  f"(faultkit apps verify {app.name} --manifests DIR)"), "warning", "unchecked"
        return
    try:
        spec = find_container(ctx.manifests(app), c.workload, c.container)
    except FaultkitError as err:
        yield "config.workload", str(err)
        return
    why = refusal(spec, c.field)
    if why:
        yield "config.field", why
        return
    current = get_field(spec, c.field)
    if c.loaded_from:
        yield from _check_loaded(ctx.manifests(ctx.app(e.app)), spec, c)
    elif current is None and c.kind != "cleared-value":
        yield "config.field", f"{c.field!r} is not written in the manifest of {c.workload}/{c.container}"
    elif current != c.old:
        yield "config.old", f"the manifest says {current!r}, the entry says {c.old!r}"
    if c.new == c.old:
        yield "config.new", "the new value equals the old one; the change changes nothing"
    mismatch = kind_mismatch(c.kind, c.field, c.old, c.new)
    if mismatch:
        yield "config.kind", mismatch
    refused = below_request(spec, c.field, c.new)
    if refused:
        yield "config.new", refused


def _check_loaded(docs: list[Doc], spec: dict[str, Any], c: ConfigChange) -> Iterator[tuple[str, str]]:
    """A var the container loads from a ConfigMap: the workload must not write it, and the ConfigMap
    the entry names must be where the container loads it from, with the entry's old value."""
    if not c.field.startswith("env."):
        yield "config.loaded_from", "only an env var is loaded from a ConfigMap (envFrom)"
        return
    found = loaded_from(docs, spec, c.field.split(".", 1)[1])
    if found is None:
        yield "config.loaded_from", (f"{c.workload}/{c.container} does not load {c.field.split('.', 1)[1]} from a "
                                     "ConfigMap without writing it (envFrom)")
    elif f"ConfigMap/{found[0]}" != c.loaded_from:
        yield "config.loaded_from", f"the container loads it from ConfigMap/{found[0]}, not {c.loaded_from}"
    elif found[1] != c.old:
        yield "config.old", f"ConfigMap/{found[0]} says {found[1]!r}, the entry says {c.old!r}"


def check_direct(ctx: Context, e: Entry) -> Iterator[tuple[str, str]]:
    if not e.direct:
        return
    action = ACTIONS[e.direct.action]
    if e.level not in action.levels:
        yield "level", f"{action.name} acts at {', '.join(action.levels)} level, not {e.level}"
    known = {p.name: p for p in action.params}
    for key, value in e.direct.params.items():
        param = known.get(key)
        if param is None:
            yield f"direct.params.{key}", f"{action.name} takes no parameter {key!r}{suggest(key, list(known))}"
        elif not isinstance(value, param.type) or isinstance(value, bool):
            yield f"direct.params.{key}", f"expected {param.type.__name__}, found {value!r}"
        elif isinstance(value, int | float) and (
            (param.minimum is not None and value < param.minimum)
            or (param.maximum is not None and value > param.maximum)
        ):
            yield f"direct.params.{key}", f"{value} is outside {param.minimum}..{param.maximum}"
