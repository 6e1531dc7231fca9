"""One walk over libyaml's events: the hostile-input limits, and the plain data built on the way.

A cold lint parses a thousand entries; PyYAML's way to load one parses it twice here (the limits
must be checked on events before the C composer sees the text) and then builds every value in
pure-Python constructor code. Building the plain values (strings, numbers, booleans, null,
mappings, sequences) from the events the limit check walks anyway costs a fraction of that
(issue 20). The result is the one PyYAML's SafeLoader builds: tags are resolved by its own
resolver and numbers and booleans made by its own constructors. Anything else (an explicit tag
beyond those, a key that is a collection or an alias, an undefined or repeated anchor) makes
walk() answer None, and the caller loads the text with PyYAML as before, errors and all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

from faultkit.errors import InputError

# Deeper than any entry, descriptor or bundle, far shallower than the C stack or Python's recursion limit.
MAX_DEPTH = 64
# Values in one document once aliases are expanded: a billion laughs stops here, in milliseconds.
MAX_NODES = 200_000
# plain scalars YAML 1.1 would read as integers too long for 64 bits (Python refuses beyond 4,300 digits)
_LONG_INT = re.compile(r"[-+]?(?:[0-9_]{21,}|0[xX][0-9a-fA-F_]{17,}|0[bB][01_]{65,}|0[oO]?[0-7_]{23,})")
_LONG_MIN = 19  # the shortest text _LONG_INT matches ("0x" and 17 digits): shorter ones skip the regex
MAX_INT = 2**63 - 1
Pointer = tuple[str | int, ...]

# libyaml's parser where it is installed. The type checker sees SafeLoader, whose interface the C loader has.
if TYPE_CHECKING:
    FAST_LOADER = yaml.SafeLoader
else:
    FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
# scalar tags whose value is built here, with SafeLoader's own constructor for each
_SCALARS = {_TAG + name: yaml.SafeLoader.yaml_constructors[_TAG + name] for name in ("null", "bool", "int", "float")}
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
# the first characters SafeLoader's implicit resolvers look at: a plain scalar starting otherwise is a
# string (the resolver's own rule; there are no wildcard or path resolvers to consult)
_FIRSTS = frozenset(FAST_LOADER.yaml_implicit_resolvers)
_SHORTCUT = None not in _FIRSTS and not FAST_LOADER.yaml_path_resolvers
_OPEN = object()  # an anchor whose collection has not ended yet


@dataclass(frozen=True)
class Document:
    data: Any
    line: int  # 1-based line of the document's top value
    duplicates: bool  # a mapping spells a key twice (PyYAML keeps the later value)
    plain: bool = True  # nothing yamlio.check_plain would refuse: string keys, 64-bit integers, finite floats


class _Refused(Exception):
    def __init__(self, event: yaml.Event, problem: str) -> None:
        super().__init__(problem)
        self.line = event.start_mark.line + 1 if event.start_mark else 1
        self.problem = problem


class _Giveup(Exception):
    """A value only PyYAML's constructor may build (or refuse): the caller loads the text with it."""


def yaml_error(e: yaml.YAMLError, where: str) -> InputError:
    mark = getattr(e, "problem_mark", None)
    at = f"{where}:{mark.line + 1}" if mark else where
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return InputError(f"{at}: malformed YAML: {problem}")


def check_events(text: str, where: str) -> None:
    """Refuse, before anything is built, YAML that would exhaust the stack or the memory.

    libyaml's event parser keeps its own heap stacks, so walking its events is safe and cheap (a
    third of a load) even where composing would crash: nesting beyond MAX_DEPTH (100,000 brackets
    segfault the C composer), aliases expanding beyond MAX_NODES (a billion laughs), an alias inside
    the value it names (a value that contains itself, which no walk of it ends), and `<<` merge keys
    (which splice values in where no line says so).
    """
    walk(text, where, build=False)


def walk(text: str, where: str, build: bool = True) -> list[Document] | None:
    """Check the limits over every event of every document; with `build`, also each document's data,
    or None when some value needs PyYAML's constructor. Limit and syntax errors come first, as
    InputErrors naming the line, whatever the documents hold."""
    loader = FAST_LOADER(text)
    try:
        return _Walk(build).run(loader)
    except _Refused as e:
        raise InputError(f"{where}:{e.line}: refused: {e.problem}") from None
    except yaml.YAMLError as e:
        raise yaml_error(e, where) from None
    finally:
        loader.dispose()


class _Walk:
    def __init__(self, build: bool) -> None:
        self.build = build
        self.docs: list[Document] = []
        self.duplicates = False
        self.plain = True  # every key a string, every number within what JSON carries faithfully
        self.root: Any = None
        self.line = 1
        # per open collection: [nodes inside it, anchor, is-mapping, next scalar is a key, the value,
        # the pending key, the keys' raw spellings]
        self.stack: list[list[Any]] = []
        self.values: dict[str, Any] = {}  # anchor -> its value (_OPEN while its collection is open)

    def run(self, loader: yaml.SafeLoader) -> list[Document] | None:
        get, resolve = loader.get_event, loader.resolve
        scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
        starts, ends = (yaml.MappingStartEvent, yaml.SequenceStartEvent), (yaml.MappingEndEvent, yaml.SequenceEndEvent)
        depth = nodes = 0
        sizes: dict[str, int] = {}
        stack = self.stack
        while True:
            ev = get()
            cls = ev.__class__
            if cls is scalar_event or cls is alias_event or cls in starts:
                top = stack[-1] if stack else None
                key_pos = top is not None and top[2] and top[3]
                if top is not None and top[2]:
                    top[3] = not top[3]
                if cls is scalar_event:
                    value = ev.value
                    if not ev.style:
                        if key_pos and value == "<<" and ev.tag in (None, "tag:yaml.org,2002:merge"):
                            raise _Refused(ev, "a '<<' merge key; write the values out in full")
                        if len(value) >= _LONG_MIN and _LONG_INT.fullmatch(value):
                            raise _Refused(ev, "an integer beyond 64 bits; write a smaller number")
                    grow = 1
                    if ev.anchor:
                        sizes[ev.anchor] = 1
                        if self.build:
                            self._place(self._scalar(ev, resolve), key_pos, value, ev)
                    elif self.build:
                        # the common case inline: a plain string no implicit resolver claims, or a quoted one
                        if ev.tag is None and _SHORTCUT and (not ev.implicit[0] or value and value[0] not in _FIRSTS):
                            built: Any = value
                        else:
                            built = self._scalar(ev, resolve)
                        if top is None:
                            self.root, self.line = built, ev.start_mark.line + 1 if ev.start_mark else 1
                        elif not top[2]:
                            top[4].append(built)
                        elif key_pos:
                            if value in top[6]:
                                self.duplicates = True
                            top[6].add(value)
                            top[5] = built
                            if built.__class__ is not str:
                                self.plain = False  # check_plain names the key that is not a string
                        else:
                            top[4][top[5]] = built
                elif cls is alias_event:
                    if self.values.get(ev.anchor) is _OPEN:
                        raise _Refused(ev, f"the alias *{ev.anchor} inside the value it names; write the value out")
                    grow = sizes.get(ev.anchor or "", 1)
                    if self.build:
                        self._alias(ev, key_pos)
                else:
                    depth += 1
                    if depth > MAX_DEPTH:
                        raise _Refused(ev, f"nesting deeper than {MAX_DEPTH} levels")
                    is_map = cls is starts[0]
                    container: Any = self._collection(ev, is_map, key_pos, resolve) if self.build else None
                    if ev.anchor:
                        self.values[ev.anchor] = _OPEN if ev.anchor not in self.values else self.values[ev.anchor]
                    stack.append([1, ev.anchor, is_map, True, container, None, set()])
                    continue
                nodes += grow
                if top is not None:
                    top[0] += grow
                if nodes > MAX_NODES:
                    raise _Refused(ev, f"more than {MAX_NODES} values once aliases are expanded")
            elif cls in ends:
                depth -= 1
                size, anchor, _, _, container, _, _ = stack.pop()
                if anchor:
                    sizes[anchor] = size
                    if self.values.get(anchor) is _OPEN:
                        self.values[anchor] = container
                nodes += 1
                if stack:
                    stack[-1][0] += size
            elif cls is yaml.DocumentStartEvent:  # limits and anchors are per document
                nodes, sizes = 0, {}
                self.values, self.root, self.line, self.duplicates, self.plain = {}, None, 1, False, True
            elif cls is yaml.DocumentEndEvent:
                if self.duplicates and not self.plain and self.build:
                    # a repeated key's later value replaced the one that was not plain: ask the data built
                    self.plain = _is_plain(self.root)
                self.docs.append(Document(self.root, self.line, self.duplicates, self.plain))
            elif cls is yaml.StreamEndEvent or ev is None:
                return self.docs if self.build else None

    def _scalar(self, ev: yaml.ScalarEvent, resolve: Any) -> Any:
        tag = ev.tag
        if tag is None or tag == "!":
            tag = resolve(yaml.ScalarNode, ev.value, ev.implicit)
        if tag == _STR:
            return ev.value
        make = _SCALARS.get(tag)
        if make is None:
            self._giveup()
            return None
        try:
            value = make(_CONSTRUCTOR, yaml.ScalarNode(tag, ev.value))
        except (ValueError, OverflowError, KeyError, yaml.YAMLError):
            self._giveup()
            return None
        if (value.__class__ is int and not -MAX_INT <= value <= MAX_INT) or (
                value.__class__ is float and not math.isfinite(value)):
            self.plain = False  # check_plain refuses it, naming the line
        return value

    def _collection(self, ev: yaml.CollectionStartEvent, is_map: bool, key_pos: bool, resolve: Any) -> Any:
        tag = ev.tag
        if tag is None or tag == "!":
            tag = resolve(yaml.MappingNode if is_map else yaml.SequenceNode, None, ev.implicit)
        if key_pos or tag != (_MAP if is_map else _SEQ):
            self._giveup()  # an unhashable key, or a set, omap or other tagged collection
            return None
        if ev.anchor and ev.anchor in self.values:
            self._giveup()  # PyYAML refuses a repeated anchor
        container: Any = {} if is_map else []
        self._place(container, False, None, ev)
        return container

    def _alias(self, ev: yaml.AliasEvent, key_pos: bool) -> None:
        if key_pos or ev.anchor not in self.values:
            self._giveup()  # an aliased key (PyYAML's duplicate check reads its node), an undefined alias
            return
        self._place(self.values[ev.anchor], False, None, ev)

    def _place(self, value: Any, key_pos: bool, raw: str | None, ev: yaml.Event) -> None:
        if not self.build:
            return
        anchor = getattr(ev, "anchor", None)
        if anchor and ev.__class__ is yaml.ScalarEvent:
            if anchor in self.values:
                self._giveup()
                return
            self.values[anchor] = value
        if not self.stack:
            self.root, self.line = value, ev.start_mark.line + 1 if ev.start_mark else 1
            return
        top = self.stack[-1]
        if not top[2]:
            top[4].append(value)
        elif key_pos:
            if raw in top[6]:
                self.duplicates = True
            top[6].add(raw)
            top[5] = value
            if value.__class__ is not str:
                self.plain = False
        else:
            top[4][top[5]] = value

    def _giveup(self) -> None:
        """Stop building, keep checking: the caller loads the text with PyYAML once the limits pass."""
        self.build = False


def check_plain(data: Any, where: str, line: Callable[[Pointer], int] = lambda _: 1) -> None:
    """Refuse values JSON cannot carry faithfully: non-string keys, non-finite or huge numbers,
    and YAML's extra types (dates, binary, sets). The walk is iterative: depth is bounded already."""
    todo: list[tuple[Pointer, Any]] = [((), data)]
    while todo:
        path, value = todo.pop()
        problem = _plain_problem(value)
        if isinstance(value, dict):
            for k, v in value.items():
                if not isinstance(k, str):
                    problem = f"key {k!r} is a {type(k).__name__}; keys must be strings (quote it)"
                    break
                todo.append(((*path, k), v))
        elif isinstance(value, list):
            todo.extend(((*path, i), v) for i, v in enumerate(value))
        if problem:
            shown = ".".join(map(str, path)) or "(document)"
            raise InputError(f"{where}:{line(path)}: {shown}: {problem}")


def _plain_problem(value: Any) -> str | None:
    if isinstance(value, bool) or value is None or isinstance(value, str | dict | list):
        return None
    if isinstance(value, int):
        return None if -MAX_INT <= value <= MAX_INT else "an integer beyond 64 bits; write a smaller number"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a finite number; write a number"
    return f"a {type(value).__name__} value; quote it to make it a string"


def _is_plain(data: Any) -> bool:
    try:
        check_plain(data, "")
    except InputError:
        return False
    return True
