"""The JSON Schemas that ship inside the package, and checking a located document against one."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a document is checked, not by `catalog lint` answered from its cache
    from faultkit.yamlio import Located, Pointer

SCHEMAS = ("entry", "app", "schedule", "release")


@dataclass(frozen=True)
class Problem:
    """One finding about one value of one document."""

    path: str  # breadcrumb such as "target.service" or "scope[2]"
    line: int
    message: str
    severity: str = "error"  # "error" or "warning"
    rule: str = "schema"


@cache
def schema_text(name: str) -> str:
    return resources.files("faultkit.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")


@cache
def validator(name: str) -> Any:
    """jsonschema's validator, imported only when a document needs explaining (it is slow to import).
    A schema may refer to a part of another by its $id (the app's default probe is an entry's probe)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (_ids()[other], Resource.from_contents(_anchored(json.loads(schema_text(other))))) for other in SCHEMAS)
    return Draft202012Validator(_anchored(json.loads(schema_text(name))), registry=registry)


@cache
def _ids() -> dict[str, str]:
    return {name: json.loads(schema_text(name))["$id"] for name in SCHEMAS}


def _by_id(uri: str) -> Any:
    """fastjsonschema's handler for a reference to another of the package's schemas, never the network."""
    name = next((n for n, i in _ids().items() if i == uri.split("#")[0]), None)
    if name is None:
        raise ValueError(f"{uri}: not one of faultkit's schemas")
    return _draft7(json.loads(schema_text(name)))


def _anchored(node: Any) -> Any:
    """The schema with every pattern's final `$` read as end of text. The published schemas are
    ECMA-262 regexes, where `$` is the end; Python's `re` (which jsonschema uses) also lets `$` match
    before a trailing newline, so an id "x-y-z\\n" would pass and become a file name."""
    if isinstance(node, dict):
        return {k: (v[:-1] + "\\Z" if k == "pattern" and isinstance(v, str) and v.endswith("$")
                    and not v.endswith("\\$") else _anchored(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_anchored(v) for v in node]
    return node


@cache
def _fast(name: str) -> Callable[[Any], bool]:
    """A compiled yes/no check: twenty times faster than jsonschema on the valid documents that
    make up most of a catalog; jsonschema then explains the invalid ones, every error at once."""
    return fast_part(name)


@cache
def fast_part(name: str, *keys: str) -> Callable[[Any], bool]:
    """_fast for the part of schema `name` at `keys` (e.g. "properties", "services", "items")."""
    import fastjsonschema

    schema = json.loads(schema_text(name))
    for key in keys:
        schema = schema[key]
    schema = _draft7(schema)
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    compiled = fastjsonschema.compile(schema, handlers={"https": _by_id})

    def check(data: Any) -> bool:
        try:
            compiled(data)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return check


def _draft7(node: Any) -> Any:
    """The schema in draft-07 terms for fastjsonschema: 2020-12's `prefixItems` (and the `items`
    beside it, which then means the rest) is draft-07's array form of `items` and `additionalItems`.
    So the app descriptor is checked without importing jsonschema (issue 20), which still explains."""
    if isinstance(node, list):
        return [_draft7(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _draft7(v) for k, v in node.items() if k not in ("prefixItems", "items")}
    if "prefixItems" in node:
        out["items"] = _draft7(node["prefixItems"])
        if "items" in node:
            out["additionalItems"] = _draft7(node["items"])
    elif "items" in node:
        out["items"] = _draft7(node["items"])
    return out


def breadcrumb(path: Pointer) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(document)"


def check_document(located: Located, schema: str) -> list[Problem]:
    """Every schema problem at once; unknown keys are warnings (the caller decides on --strict)."""
    problems = [
        Problem(breadcrumb(path), line, f"duplicate key {path[-1]!r}; the later value wins", "warning")
        for path, line in located.duplicate_keys
    ]
    if not problems and _fast(schema)(located.data):
        return []
    before = len(problems)
    for error in sorted(validator(schema).iter_errors(located.data), key=lambda e: list(map(str, e.absolute_path))):
        problems.extend(_explain(error, located))
    if len(problems) == before and not _fast(schema)(located.data):  # the two validators must never disagree
        problems.append(Problem("(document)", 1, f"does not match the {schema} schema"))
    return problems


def _explain(error: Any, located: Located) -> list[Problem]:
    path: Pointer = tuple(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        return [
            Problem(breadcrumb((*path, key)), located.line((*path, key)),
                    f"unknown key {key!r}{_close(key, allowed)}", "warning", "unknown-key")
            for key in extra
        ]
    return [Problem(breadcrumb(path), located.line(path), _message(error))]


def _message(error: Any) -> str:
    v, found = error.validator, _show(error.instance)
    if v == "enum":
        return f"expected one of {', '.join(map(str, error.validator_value))}, found {found}"
    if v == "type":
        return f"expected {error.validator_value}, found {type(error.instance).__name__} {found}"
    if v == "required":
        return error.message.replace("is a required property", "is required")
    if v == "pattern":
        return f"{found} does not match the expected form {error.validator_value}"
    if v == "not" and isinstance(error.validator_value, dict) and "required" in error.validator_value:
        return f"give one of {' or '.join(error.validator_value['required'])}, not both"
    if v == "const":
        return f"expected {error.validator_value!r}, found {found}"
    return error.message


def _close(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

