"""Fuzzing every loader and judge: whatever the input, only faultkit's own errors come out.

Bounded for CI: a fixed number of examples per loader and no per-example deadline (the machine is
shared); the whole harness takes well under a minute. `derandomize` keeps CI runs reproducible;
run with FAULTKIT_FUZZ_EXAMPLES=5000 locally to search further.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faultkit.apps.descriptor import load_descriptor
from faultkit.apps.importer import import_manifests
from faultkit.apps.manifests import load_manifest_file
from faultkit.bundles import BundleWriter
from faultkit.catalog.lint import lint
from faultkit.errors import FaultkitError
from faultkit.schedules import document, synthetic
from faultkit.schedules.sources import load_release
from faultkit.validators.judge import verify_and_judge
from tests.factories import cart_prefix_entry, entry_data
from tests.release.admit import make_bundle

EXAMPLES = int(os.environ.get("FAULTKIT_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=20), st.sampled_from(["[/red]", "../../x", "x\n", "<<", "*a", "&a", "!!set",
                                                           "cart", "minishop", "sha256:" + "0" * 64, ""]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)
yaml_noise = st.one_of(st.text(max_size=200), st.sampled_from([
    "a: &x [1]\nb: *x\n", "<<: {a: 1}\n", "? [a]\n: b\n", "1: 2\n", "a: !!binary aGk=\n", "a: .nan\n",
    "[" * 200, "- " * 200 + "x", "a: 2026-01-01\n", "a: !!python/name:os.system\n", "%YAML 1.1\n---\na: 1\n",
]))


def mutate(draw: st.DrawFn, data: Any) -> Any:
    """`data` with one value somewhere (possibly the whole document) replaced by an arbitrary one."""
    if draw(st.integers(0, 3)) == 0 or not isinstance(data, dict | list) or not data:
        return draw(values)
    if isinstance(data, dict):
        key = draw(st.sampled_from(sorted(data)))
        if draw(st.integers(0, 5)) == 0:
            return {k: v for k, v in data.items() if k != key}  # a required field goes missing
        return {**data, key: mutate(draw, data[key])}
    i = draw(st.integers(0, len(data) - 1))
    return [*data[:i], mutate(draw, data[i]), *data[i + 1:]]


def safe_dump(data: Any) -> str:
    try:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, ValueError):
        return "a: 1\n"


def only_faultkit_errors(call: Any) -> None:
    try:
        call()
    except FaultkitError:
        pass


@pytest.fixture
def code_ws(ws):  # type: ignore[no-untyped-def]
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(
        "--- a/src/cart/main.py\n+++ b/src/cart/main.py\n@@ -10,3 +10,4 @@\n \n SERVICE = \"cart\"\n"
        " MAX_QUANTITY = 999\n+_LEGACY_PREFIX = \"cart-v2:\"\n")
    return ws


@FUZZ
@given(data=st.data())
def test_entry_loader_and_lint(code_ws, data):
    base = data.draw(st.sampled_from([entry_data(), {k: v for k, v in cart_prefix_entry().items() if v is not None}]))
    text = safe_dump(mutate(data.draw, base)) if data.draw(st.booleans()) else data.draw(yaml_noise)
    path = code_ws.catalog_dir / "minishop" / "fuzz.yaml"
    path.write_text(text)
    only_faultkit_errors(lambda: lint(code_ws, [path]))


@FUZZ
@given(data=st.data())
def test_descriptor_loader(ws, data):
    base = yaml.safe_load((ws.apps_dir / "minishop" / "app.yaml").read_text())
    text = safe_dump(mutate(data.draw, base)) if data.draw(st.booleans()) else data.draw(yaml_noise)
    path = ws.root / "fuzz-app.yaml"
    path.write_text(text)
    only_faultkit_errors(lambda: load_descriptor(path))


@FUZZ
@given(data=st.data())
def test_manifest_loader(ws, data):
    files = sorted((ws.apps_dir / "minishop" / "manifests").glob("*.yaml"))
    docs = list(yaml.safe_load_all(files[0].read_text()))
    text = "---\n".join(safe_dump(mutate(data.draw, d)) for d in docs[:3]) if data.draw(st.booleans()) \
        else data.draw(yaml_noise)
    path = ws.root / "fuzz-manifest.yaml"
    path.write_text(text)
    only_faultkit_errors(lambda: load_manifest_file(path))
    only_faultkit_errors(lambda: import_manifests("fuzz", [path]))


@FUZZ
@given(data=st.data())
def test_release_loader(ws, tmp_path, data):
    base = synthetic.release("1.0.0", synthetic.entries("shop", 5, 6, ("code-bug", "dependency")))
    doc = mutate(data.draw, base)
    try:
        text = json.dumps(doc)
    except (TypeError, ValueError):
        text = "{}"
    path = tmp_path / "catalog-1.0.0.json"
    path.write_text(text)
    only_faultkit_errors(lambda: load_release(path).candidates("shop"))


@FUZZ
@given(data=st.data())
def test_schedule_loader(ws, tmp_path, data):
    release = synthetic.release("1.0.0", synthetic.entries("shop", 5, 20, ("code-bug", "dependency")))
    path = tmp_path / "catalog-1.0.0.json"
    path.write_text(json.dumps(release))
    from faultkit.schedules.params import preset

    base = document.build(load_release(path), "shop", preset("light-5"), 1)
    doc = mutate(data.draw, json.loads(document.dumps(base)))
    out = tmp_path / "schedule.json"
    out.write_text(json.dumps(doc))
    only_faultkit_errors(lambda: document.load(out))


@pytest.fixture
def sealed(ws, tmp_path) -> Path:  # type: ignore[no-untyped-def]
    folder, _ = make_bundle(ws, entry_data())
    return ws.root / folder


BUNDLE_FILES = ["inputs.json", "stages.json", "windows/before-1.json", "windows/after-1.json",
                "windows/recovery-2.json", "verdict.json"]


@FUZZ
@given(data=st.data())
def test_judge_on_resealed_bundles(sealed, tmp_path, data):
    folder = tmp_path / "bundle"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(sealed, folder)
    for _ in range(data.draw(st.integers(1, 2))):
        name = data.draw(st.sampled_from(BUNDLE_FILES))
        doc = mutate(data.draw, json.loads((folder / name).read_text()))
        try:
            (folder / name).write_text(json.dumps(doc))
        except (TypeError, ValueError):
            (folder / name).write_text("{}")
    BundleWriter(folder).seal()  # resealed and signed: only judge's own checks stand between it and a verdict
    only_faultkit_errors(lambda: verify_and_judge(folder))


def test_the_fuzzed_bundle_is_a_real_one(sealed):
    verdict, same = verify_and_judge(sealed)
    assert same and verdict["status"] == "admitted"
