"""Kubernetes manifests as plain data: load them, find a container, read and set a field by path.

A field path is dotted; a list item is selected by its `name` key, or by its index:
`env.CART_ADDR` is the value of that variable, `resources.limits.memory`, `ports.http.containerPort`,
`args.0`. A Service's fields are addressed with workload `Service/<name>` and an empty container.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from faultkit.errors import InputError
from faultkit.yamlevents import walk
from faultkit.yamlio import read_text

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


@dataclass(frozen=True)
class Doc:
    kind: str
    name: str
    body: dict[str, Any]
    file: Path
    line: int


def load_manifests(folder: Path) -> list[Doc]:
    """Every Kubernetes object in the folder's *.yaml / *.yml files, in file order."""
    if not folder.is_dir():
        raise InputError(f"{folder}: manifests folder not found; put the app's manifests there (for an app "
                         "derived from upstream files, your copy of them: faultkit apps verify APP --manifests DIR)")
    files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
    return [doc for f in files for doc in load_manifest_file(f)]


MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def manifest_files(paths: list[Path]) -> list[Path]:
    """The files MANIFESTS names: each file as given, and for a folder every *.yaml, *.yml and *.json
    under it (hidden folders and symbolic links left out), sorted by their path in it."""
    out: list[Path] = []
    for path in paths:
        if not path.is_dir():
            out.append(path)
            continue
        found = []
        for folder, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += [Path(folder) / n for n in names if n.lower().endswith(MANIFEST_SUFFIXES)
                      and not n.startswith(".") and not (Path(folder) / n).is_symlink()]
        if not found:
            raise InputError(f"{path}: no *.yaml, *.yml or *.json file in this folder; give the manifests' folder")
        out += sorted(found, key=lambda f: f.relative_to(path).parts)
    return out


def objects_in(files: Iterable[Path]) -> list[Doc]:
    """Every object of the files, each once: `kubectl get -o yaml`'s List is unwrapped, and an object
    repeated word for word is one object, as `kubectl apply` takes it (Bank of Anthos' rendered
    manifests repeat the shared ConfigMaps, Secrets and databases in every service's file); one
    repeated with a difference (a base and an overlay of it) is refused."""
    seen: dict[tuple[str, str, str], Doc] = {}
    kept = []
    for d in (o for path in files for doc in load_manifest_file(path) for o in _unwrapped(doc)):
        first = seen.setdefault((d.kind, namespace_of(d), d.name), d) if d.name else d
        if first is d:
            kept.append(d)
        elif first.body != d.body:
            raise InputError(f"{d.file}:{d.line}: {d.kind} {d.name!r} is also at {first.file}:{first.line}, "
                             "differently; give the manifests of one deployment, each object once")
    return kept


def _unwrapped(doc: Doc) -> list[Doc]:
    if doc.kind != "List":
        return [doc]
    return [Doc(str(i.get("kind")), str((i.get("metadata") or {}).get("name", "")), i, doc.file, doc.line)
            for i in doc.body.get("items") or [] if isinstance(i, dict) and i.get("kind")]


def namespace_of(doc: Doc) -> str:
    return str((doc.body.get("metadata") or {}).get("namespace") or "")


def load_manifest_file(path: Path) -> list[Doc]:
    text = read_text(path, max_bytes=16 * 1024 * 1024)
    # alias bombs and deep nesting are refused on the events, and plain data is built in that pass
    built = walk(text, str(path))
    docs: list[Doc] = []
    for body, line in _documents(text, path) if built is None else ((d.data, d.line) for d in built):
        if isinstance(body, dict) and body.get("kind"):
            problem = shape_problem(body, SHAPE)
            if problem:
                raise InputError(f"{path}:{line}: {problem}; is this a Kubernetes manifest?")
            metadata = body.get("metadata")
            name = str(metadata.get("name", "")) if isinstance(metadata, dict) else ""
            docs.append(Doc(str(body["kind"]), name, body, path, line))
    return docs


def _documents(text: str, path: Path) -> list[tuple[Any, int]]:
    """Each document and its line, as PyYAML builds them: for values beyond plain data (tags)."""
    out = []
    try:
        for node in yaml.compose_all(text, Loader=yaml.SafeLoader):
            if node is not None:
                out.append((yaml.SafeLoader("").construct_document(node), node.start_mark.line + 1))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise InputError(f"{where}: malformed YAML: {getattr(e, 'problem', None) or e}") from None
    return out


# The parts of a Kubernetes object faultkit reads, with the type each must have where present: a
# manifest from a pull request is checked against it once, so no reader meets a list where it
# expects a mapping. A dict is a nested mapping, a one-item list a list of such items.
_SCALAR = (str, int, float, bool)
_CONTAINER = {"name": _SCALAR, "image": _SCALAR, "env": [{"name": _SCALAR, "value": _SCALAR + (type(None),),
                                                           "valueFrom": dict}],
              "ports": [{"containerPort": _SCALAR, "name": _SCALAR}], "envFrom": [dict], "args": list,
              "command": list, "resources": {"limits": dict, "requests": dict}}
_META = {"name": _SCALAR, "namespace": _SCALAR, "labels": dict, "annotations": dict}
SHAPE: dict[str, Any] = {
    "kind": _SCALAR,
    "metadata": _META,
    "spec": {"template": {"metadata": _META, "spec": {"containers": [_CONTAINER], "initContainers": [_CONTAINER]}},
             "selector": dict, "ports": [{"port": _SCALAR, "name": _SCALAR, "targetPort": _SCALAR}],
             "type": _SCALAR, "clusterIP": _SCALAR, "replicas": _SCALAR},
    "items": [dict],
}


def shape_problem(value: Any, shape: Any, where: str = "") -> str | None:
    """Where `value` departs from `shape` (see SHAPE); None when it does not."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return f"{where or '(object)'} should be a mapping, found {type(value).__name__}"
        for key, inner in shape.items():
            if key in value and value[key] is not None:
                found = shape_problem(value[key], inner, f"{where}.{key}" if where else key)
                if found:
                    return found
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where} should be a list, found {type(value).__name__}"
        return next((p for i, v in enumerate(value) if (p := shape_problem(v, shape[0], f"{where}[{i}]"))), None)
    if not isinstance(value, shape):
        return f"{where} should not be a {type(value).__name__}"
    return None


def find_object(docs: list[Doc], kind: str, name: str) -> Doc:
    for doc in docs:
        if doc.name == name and (doc.kind == kind or (kind == "workload" and doc.kind in WORKLOAD_KINDS)):
            return doc
    raise InputError(f"no {kind} named {name!r} in the manifests")


def pod_spec(body: dict[str, Any]) -> dict[str, Any]:
    return body.get("spec", {}).get("template", {}).get("spec", {})


def find_container(docs: list[Doc], workload: str, container: str) -> dict[str, Any]:
    """The container spec, or for `Service/<name>` the Service's spec."""
    if workload.startswith("Service/"):
        return find_object(docs, "Service", workload.split("/", 1)[1]).body.get("spec", {})
    doc = find_object(docs, "workload", workload)
    for c in pod_spec(doc.body).get("containers", []) or []:
        if c.get("name") == container:
            return c
    names = [c.get("name") for c in pod_spec(doc.body).get("containers", []) or []]
    raise InputError(f"{doc.file}:{doc.line}: workload {workload!r} has no container {container!r} (it has {names})")


def step(node: Any, segment: str) -> Any:
    """One segment of a field path: a dict key, a list item by `name` (an env var by its value), or an index."""
    if isinstance(node, dict):
        return node.get(segment)
    if isinstance(node, list):
        for item in node:
            if isinstance(item, dict) and item.get("name") == segment:
                # a path to an env var means its value
                return item["value"] if "value" in item else item
        if segment.isdigit() and int(segment) < len(node):
            return node[int(segment)]
    return None


def get_field(spec: dict[str, Any], path: str) -> str | None:
    """The value at `path` as a string (what the process would see), None when absent."""
    node: Any = spec
    for segment in path.split("."):
        node = step(node, segment)
        if node is None:
            return None
    if isinstance(node, (dict, list)):
        return None
    return node if isinstance(node, str) else str(node)


def set_field(spec: dict[str, Any], path: str, value: str | None) -> dict[str, Any]:
    """A copy of `spec` with `path` set to `value`; None removes the item or key."""
    out = copy.deepcopy(spec)
    *parents, last = path.split(".")
    node: Any = out
    for segment in parents:
        child = step(node, segment)
        if child is None and isinstance(node, dict):
            child = node.setdefault(segment, {})
        if child is None:
            raise InputError(f"field path {path!r}: {segment!r} does not exist")
        node = child
    if isinstance(node, dict):
        if value is None:
            node.pop(last, None)
        else:
            node[last] = _typed_like(node.get(last), value)
        return out
    if isinstance(node, list):
        for i, item in enumerate(node):
            if isinstance(item, dict) and item.get("name") == last:
                if value is None:
                    del node[i]
                else:
                    item.pop("valueFrom", None)
                    item["value"] = value
                return out
        if value is not None and parents and parents[-1] == "env":
            node.append({"name": last, "value": value})
            return out
        if last.isdigit() and int(last) < len(node):
            node[int(last)] = value
            return out
    raise InputError(f"field path {path!r}: {last!r} does not exist")


def _typed_like(old: Any, value: str) -> Any:
    """Keep an integer field an integer (ports), everything else a string."""
    if isinstance(old, int) and value.lstrip("-").isdigit():
        return int(value)
    return value
