"""Where a workload names its peers: its env, the ConfigMaps it loads, and free text (config files,
source code), each reference marked with where it was found.

A workload's configuration is read the way the kubelet hands it over: `env` values (with `$(VAR)`
expanded), `envFrom` ConfigMaps (every key becomes a variable), `valueFrom.configMapKeyRef`, and
ConfigMaps mounted as files through `volumes` + `volumeMounts`. Secrets are never read.

In free text only addresses written as addresses count (a URL, host:port), plus a bare name under a
key that says it is a host (`spring.data.mongodb.host: ts-order-mongo`, `ORDER_HOST=...`).
Placeholder defaults are taken as written: Spring's `${NAME:default}`, the shell's `${NAME:-default}`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from faultkit.apps.manifests import Doc

_VAR = re.compile(r"(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z0-9_.\-]+:-?([^{}]*)\}")
# candidates in free text; each is parsed by apps.addresses, which decides
_IN_TEXT = re.compile(
    r"(?:(?:jdbc:)?[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"`<>,;(){}]+)"
    r"|(?:[^\s'\"`<>,;(){}=/@]+@)?(?:\[[0-9A-Fa-f:.]+\]|\b[A-Za-z_][A-Za-z0-9_.-]*):\d{1,5}\b"
)
# `key: value`, `key = value`, `"key": "value"`, KEY=value, setX("value") is not a key
_KEY_VALUE = re.compile(r"""^\s*["']?(?P<key>[A-Za-z_][A-Za-z0-9_.\-\[\]]*)["']?\s*[:=]\s*["']?(?P<value>[^"'#\s]+)""")
HOST_KEY = re.compile(r"(HOST|HOSTNAME|SERVER|ADDR|ADDRESS)$", re.I)
FILE_KEY = re.compile(r"\.(ya?ml|properties|conf|cfg|ini|json|toml|xml|env)$", re.I)


@dataclass(frozen=True)
class Reference:
    caller: str  # the service whose configuration or code holds it
    name: str  # the variable or key it is under, "" when none
    value: str  # the text naming one or more hosts
    found_in: str | None  # None: written in the container's env; else "ConfigMap/x KEY" or "path:line"
    free_text: bool = False  # from a file: only written addresses and host keys count


def expand(value: str, env: dict[str, str]) -> str:
    return _VAR.sub(lambda m: env.get(m.group(1), m.group(0)), value).replace("$$(", "$(")


def with_defaults(line: str) -> str:
    """`http://${ORDER_HOST:ts-order-service}:${PORT:12031}` -> `http://ts-order-service:12031`."""
    for _ in range(3):  # nested placeholders, innermost first
        new = _PLACEHOLDER.sub(lambda m: m.group(1), line)
        if new == line:
            break
        line = new
    return line


def text_references(caller: str, text: str, where: str) -> Iterator[Reference]:
    """References in a config file or a source file; `where` is the file's name for `file:line`."""
    for number, raw in enumerate(text.splitlines(), 1):
        if len(raw) > 2000:  # minified or generated text: no configuration lives there
            continue
        line = with_defaults(raw)
        kv = _KEY_VALUE.match(line)
        key = kv["key"] if kv else ""
        for m in _IN_TEXT.finditer(line):
            yield Reference(caller, key, m.group(0).rstrip(".:"), f"{where}:{number}", free_text=True)
        if kv and HOST_KEY.search(key.replace(".", "_")) and not _IN_TEXT.search(kv["value"]):
            yield Reference(caller, key, kv["value"], f"{where}:{number}", free_text=True)


def configmaps(docs: list[Doc]) -> dict[str, dict[str, str]]:
    """Each ConfigMap's data by name: read once per import, not once per workload (issue 32)."""
    out: dict[str, dict[str, str]] = {}
    for d in docs:
        if d.kind == "ConfigMap":
            data = d.body.get("data") or {}
            out[d.name] = {str(k): str(v) for k, v in data.items() if isinstance(v, str | int | float)}
    return out


def loaded_vars(docs: list[Doc], container: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Each var the container loads through `envFrom` and does not write in its `env`, as
    {var: (ConfigMap name, value)}; the last source holding a key wins, as in the kubelet."""
    maps, written = configmaps(docs), {i.get("name") for i in container.get("env") or [] if isinstance(i, dict)}
    out: dict[str, tuple[str, str]] = {}
    for source in container.get("envFrom") or []:
        prefix = str((source or {}).get("prefix") or "")
        cm = str(((source or {}).get("configMapRef") or {}).get("name", ""))
        for key, value in maps.get(cm, {}).items():
            if prefix + key not in written:
                out[prefix + key] = (cm, value)
    return out


def loaded_from(docs: list[Doc], container: dict[str, Any], var: str) -> tuple[str, str] | None:
    """(ConfigMap name, value) when the container loads `var` and does not write it (loaded_vars)."""
    return loaded_vars(docs, container).get(var)


def _from_configmap(caller: str, cm: str, key: str, value: str, prefix: str = "") -> Iterator[Reference]:
    """A key loaded as a variable; a key that is a config file (by name or shape) is read as text."""
    if FILE_KEY.search(key) or "\n" in value.strip():
        yield from text_references(caller, value, f"ConfigMap/{cm} {key}")
    else:
        yield Reference(caller, prefix + key, value, f"ConfigMap/{cm} {key}")


def workload_references(caller: str, pod: dict[str, Any], maps: dict[str, dict[str, str]]) -> Iterator[Reference]:
    """Every reference in a pod spec's containers and the ConfigMaps (`configmaps(docs)`) they load."""
    volumes = {str(v.get("name")): v["configMap"] for v in pod.get("volumes") or []
               if isinstance(v, dict) and isinstance(v.get("configMap"), dict)}
    for c in pod.get("containers") or []:
        env: dict[str, str] = {}
        for item in c.get("env") or []:
            if not isinstance(item, dict):
                continue
            var = str(item.get("name"))
            if isinstance(item.get("value"), str | int):
                env[var] = expand(str(item["value"]), env)
                yield Reference(caller, var, env[var], None)
                continue
            ref = (item.get("valueFrom") or {}).get("configMapKeyRef") or {}
            cm, key = str(ref.get("name", "")), str(ref.get("key", ""))
            if key in maps.get(cm, {}):
                env[var] = maps[cm][key]
                yield Reference(caller, var, env[var], f"ConfigMap/{cm} {key}")
        for source in c.get("envFrom") or []:
            cm = str(((source or {}).get("configMapRef") or {}).get("name", ""))
            prefix = str((source or {}).get("prefix") or "")
            for key, value in maps.get(cm, {}).items():
                yield from _from_configmap(caller, cm, key, value, prefix)
        for mount in c.get("volumeMounts") or []:
            volume = volumes.get(str((mount or {}).get("name")))
            if volume is None:
                continue
            cm = str(volume.get("name", ""))
            keys = [str(i.get("key")) for i in volume.get("items") or [] if isinstance(i, dict)]
            for key, value in maps.get(cm, {}).items():
                if not keys or key in keys:
                    yield from text_references(caller, value, f"ConfigMap/{cm} {key}")
