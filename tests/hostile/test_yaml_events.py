"""The one-pass YAML loader (faultkit/yamlevents.py) builds exactly what PyYAML's SafeLoader builds,
or hands the text back to it: the same data, the same duplicate-key flag, the same errors."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faultkit.errors import FaultkitError, InputError
from faultkit.yamlevents import walk
from faultkit.yamlio import _DupLoader, check_plain, load_located

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("FAULTKIT_FUZZ_EXAMPLES", "150"))


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, keys in the same order (1 == 1.0 == True is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def reference(text: str) -> tuple[list[Any], list[bool]] | Exception:
    """PyYAML's documents and, per document, whether its loader saw a key spelt twice."""
    loader = _DupLoader(text)
    docs, flags = [], []
    try:
        while loader.check_data():
            before = len(loader.duplicates)
            docs.append(loader.get_data())
            flags.append(len(loader.duplicates) > before)
    except Exception as e:  # noqa: BLE001 - any failure: the walk must not build a value then
        return e
    finally:
        loader.dispose()
    return docs, flags


def check(text: str) -> None:
    try:
        docs = walk(text, "t.yaml")
    except InputError as e:
        assert str(e).startswith("t.yaml"), e  # a limit or a syntax error, named by line
        return
    expected = reference(text)
    if isinstance(expected, Exception):
        assert docs is None, f"built {docs} where PyYAML fails with {expected!r}"
        return
    if docs is None:
        return  # handed back to PyYAML (a tag, an aliased key, ...): allowed, never wrong
    data, flags = expected
    assert len(docs) == len(data)
    for doc, value, flag in zip(docs, data, flags, strict=True):
        assert same(doc.data, value), (text, doc.data, value)
        assert doc.duplicates == flag, text
        try:
            check_plain(value, "t.yaml")
        except InputError:
            assert not doc.plain, f"{text!r}: check_plain refuses it, so the walk must not skip it"
        else:
            assert doc.plain, text


SHIPPED = sorted(p for pattern in ("catalog/**/*.yaml", "apps/**/*.yaml", "drafts/**/*.yaml")
                 for p in REPO.glob(pattern))


def test_every_shipped_yaml_file_is_built_as_pyyaml_builds_it() -> None:
    assert len(SHIPPED) > 20
    for path in SHIPPED:
        text = path.read_text("utf-8")
        docs = walk(text, str(path))
        assert docs is not None, f"{path}: plain data, yet handed back to PyYAML"
        check(text)


CASES = [
    "a: 0o17\nb: 017\nc: 1_000\nd: 0x1F\ne: 1:30\nf: .5\ng: 1e3\nh: yes\ni: No\nj: ~\nk: null\nl: ''\n",
    "m: !!float 1\nn: !!bool yes\no: !!str 12\np: ! 12\nq: !!int '7'\nr: \"3\"\ns: |\n  x\n  y\nt: >-\n  a\n  b\n",
    "a: &x [1, {b: 2}]\nc: *x\nd: &y s\ne: *y\n", "a: 1\na: 2\n", "1: a\n'1': b\n", "? &k a\n: 1\n*k : 2\n",
    "? [a]\n: 1\n", "? {a: 1}\n: 2\n", "a: *undefined\n", "a: &x 1\nb: &x 2\n", "a: 1\n---\nb: 2\n", "", "---\n",
    "# only a comment\n", "!!set {a, b}\n", "a: !!binary aGVsbG8=\n", "a: 2026-01-01\n", "a: =\n", "a: !!omap [b: 1]\n",
    "a: !custom x\n", "- [a, b]\n- {c: [d, {e: f}]}\n", "a: .nan\nb: -.inf\nc: 1e400\n", "a: !!int x\n",
    "a: !!bool maybe\n", "1: a\n", "a: {2: b}\n", "? null\n: x\n", "a: 99999999999999999999\n",
    "a: 0x7fffffffffffffff\n", "a: -0x8000000000000000\n", "a: !!int 99999999999999999999\n",
    "[1, 2", "a: b: c\n", "\t- x\n",
    "a: !!null ''\nb: !!map {c: 1}\nc: !!seq [1]\n",
    "'': .inf\n'': 1\n",  # a repeated key's plain value replaces one check_plain refuses (found by hypothesis)
]


@pytest.mark.parametrize("text", CASES)
def test_a_tricky_document_is_built_as_pyyaml_builds_it_or_handed_back(text: str) -> None:
    check(text)


def test_an_alias_inside_its_own_value_is_refused_not_a_hang(tmp_path: Path) -> None:
    for text in ("a: &x [*x]\n", "a: &x {b: [1, *x]}\n"):
        path = tmp_path / "loop.yaml"
        path.write_text(text)
        with pytest.raises(FaultkitError, match="inside the value it names"):
            load_located(path)


keys = st.one_of(st.text(max_size=6), st.sampled_from(["1", "yes", "null", "~", "<<", "a", "a"]))
plain = st.sampled_from(["1", "-1", "0x1F", "017", "0o7", "1_0", "1:20", ".5", "1e3", "1.0e+3", ".inf", ".NaN",
                         "yes", "No", "on", "OFF", "~", "null", "", "2026-01-01", "2001-12-14t21:59:43.10-05:00",
                         "=", "x y", "'q'", '"d"', "!!str 5", "!!int 5", "!!float 5", "! 5", "&a v", "*a", "- x"])
leaf = st.one_of(plain, st.text(max_size=8).map(repr))


def block(depth: int) -> st.SearchStrategy[str]:
    """Random YAML text: block and flow collections of plain, quoted, tagged and aliased scalars."""
    if depth == 0:
        return leaf
    inner = block(depth - 1)
    flow = st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")
    mapping = st.lists(st.tuples(keys, inner), max_size=3).map(
        lambda kv: "{" + ", ".join(f"{k!r}: {v}" for k, v in kv) + "}")
    return st.one_of(leaf, flow, mapping)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(keys, block(3)), max_size=6))
def test_random_documents_are_built_as_pyyaml_builds_them(pairs: list[tuple[str, str]]) -> None:
    check("".join(f"{k!r}: {v}\n" for k, v in pairs))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet="ab:-[]{},&*!? \n'\"#|>1.", max_size=60))
def test_random_text_is_built_as_pyyaml_builds_it_or_refused(text: str) -> None:
    check(text)
