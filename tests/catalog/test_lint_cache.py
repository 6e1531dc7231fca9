"""The lint cache (issue 20): a cached result is the fresh result, byte for byte; every input a
result depends on invalidates it; two lints at once leave a sound cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import faultkit
from faultkit.catalog import lint as lint_module
from faultkit.catalog import lint_cache
from faultkit.catalog.lint import lint
from faultkit.catalog.lint_cache import CACHE_DIR, Store
from faultkit.commands.catalog_cmds import EVIDENCE_RULES
from tests.factories import cart_prefix_entry, entry_data, port_entry, write_entry
from tests.helpers.cli import FAULTKIT, cli_env, run_cli

PATCH = ('--- a/src/cart/main.py\n+++ b/src/cart/main.py\n@@ -11,2 +11,3 @@\n SERVICE = "cart"\n'
         ' MAX_QUANTITY = 999\n+_PREFIX = "cart-v2:"\n')


@pytest.fixture
def catalog(ws):
    """Eight clean entries, a code fault with its patch, and three files with findings of each
    kind: a schema error with a placeholder, a title warning, and a duplicate change."""
    for i in range(8):
        write_entry(ws, port_entry(i))
    (ws.patches_dir / "minishop" / "ms-cart-prefix.diff").write_text(PATCH)
    write_entry(ws, cart_prefix_entry())
    write_entry(ws, entry_data(id="ms-todo", category="TODO: pick one"))
    write_entry(ws, port_entry(20, title="Inject a broken cart store port"))
    dup = port_entry(21)
    dup["config"]["new"] = "cartstore:6390"  # the change of ms-cart-port-0
    write_entry(ws, dup)
    return ws


def store(ws) -> Store:
    return Store(ws.root / CACHE_DIR)


def test_cached_and_fresh_output_are_the_same_bytes(catalog, cli):
    for args in (["--json"], [], ["--strict"], ["catalog/minishop/ms-cart-port-21.yaml", "--json"]):
        fresh = cli("catalog", "lint", "--no-cache", *args, check=1)
        assert not (catalog.root / CACHE_DIR).exists()
        cold = cli("catalog", "lint", *args, check=1)
        warm = cli("catalog", "lint", *args, check=1)
        assert fresh.stdout == cold.stdout == warm.stdout and fresh.stdout
        assert len(list((catalog.root / CACHE_DIR).glob("lint-*.json"))) == 1
        shutil.rmtree(catalog.root / CACHE_DIR)
    report = json.loads(cli("catalog", "lint", "--json", check=1).stdout)
    rules = {f["rule"] for f in report["findings"]}
    assert {"schema", "todo", "title", "duplicates"} <= rules


def test_a_warm_run_reads_every_result_from_the_cache_and_one_edit_misses_one(catalog):
    first = lint(catalog, store=store(catalog))
    assert first.cached == 0
    warm = lint(catalog, store=store(catalog))
    assert warm.cached == warm.files == 12 and warm.findings == first.findings
    path = catalog.catalog_dir / "minishop" / "ms-cart-port-3.yaml"
    path.write_text(path.read_text().replace("Cart store address port changed", "Cart store port is another"))
    edited = lint(catalog, store=store(catalog))
    assert edited.cached == 11


def _change_descriptor(ws):
    path = ws.apps_dir / "minishop" / "app.yaml"
    path.write_text(path.read_text() + "\n# a comment changes the bytes, and the key\n")


def _change_manifest(ws):
    path = ws.apps_dir / "minishop" / "manifests" / "cart.yaml"
    path.write_text(path.read_text().replace('"cartstore:6379"', '"cartstore:6378"'))


def _change_words(ws):
    (ws.root / "faultkit.toml").write_text('[leakage]\nextra = ["cart"]\n')


def _record_observed(ws):
    text = ("app: minishop\nobserved_at: '2026-01-02T03:04:05Z'\nduration_s: 20\njaeger: http://127.0.0.1:16686\n"
            "edges:\n  - {caller: payment, callee: cart, spans: 3}\n")
    (ws.apps_dir / "minishop" / "observed-graph.yaml").write_text(text)


def _change_patch(ws):
    path = ws.patches_dir / "minishop" / "ms-cart-prefix.diff"
    path.write_text(PATCH.replace('"cart-v2:"', '"cart-v3:"'))


# (what changes, how, how many of the 12 files stay cached, a finding the change brings)
INPUTS = [
    ("app descriptor", _change_descriptor, 0, None),
    ("manifests", _change_manifest, 0, "config.old: the manifest says 'cartstore:6378'"),
    ("leakage word list", _change_words, 0, "'cart' in the log message the fault produces"),
    ("observed graph", _record_observed, 0, "scope of cart leaves out callers that reach it: payment"),
    ("patch", _change_patch, 11, "code.marker: 'cart-v2:' is not in any line the patch adds"),
    ("toolkit version", lambda ws: None, 0, None),
    ("schema", lambda ws: None, 0, None),
    ("rule set", lambda ws: None, 0, None),
]


@pytest.mark.parametrize("what, change, kept, brings", INPUTS, ids=[i[0] for i in INPUTS])
def test_every_input_a_result_depends_on_invalidates_it(catalog, monkeypatch, what, change, kept, brings):
    before = lint(catalog, store=store(catalog))
    assert lint(catalog, store=store(catalog)).cached == 12
    change(catalog)
    if what == "toolkit version":
        monkeypatch.setattr(faultkit, "__version__", faultkit.__version__ + ".1")
    if what == "schema":
        schema = lint_cache.entry_schema()
        monkeypatch.setattr(lint_cache, "entry_schema", lambda: schema.replace(b'"title"', b'"title" '))
    if what == "rule set":  # a rule dropped: the title warning must go with it
        monkeypatch.setattr(lint_module, "ENTRY_RULES", tuple(r for r in lint_module.ENTRY_RULES if "title" not in r))
    after = lint(catalog, store=store(catalog))
    assert after.cached == kept, what
    fresh = lint(catalog)
    assert (after.findings, after.facts) == (fresh.findings, fresh.facts), "the cached run and a fresh one agree"
    rendered = [f.render() for f in after.findings]
    if brings:
        assert any(brings in r for r in rendered), rendered
    if what == "rule set":
        assert {f.rule for f in before.findings} - {f.rule for f in after.findings} == {"title"}
    assert lint(catalog, store=store(catalog)).cached == 12, "and the new result is cached in turn"


def test_two_lints_at_once_share_one_sound_cache(catalog, monkeypatch):
    for i in range(30, 90):
        write_entry(catalog, port_entry(i))
    fresh = run_cli("catalog", "lint", "--json", "--no-cache", cwd=catalog.root)
    runs = [subprocess.Popen([*FAULTKIT, "catalog", "lint", "--json"], cwd=catalog.root, env=cli_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in runs]
    assert [p.returncode for p in runs] == [1, 1], outputs
    assert all(out == fresh.stdout and err == "" for out, err in outputs)
    packs = list((catalog.root / CACHE_DIR).glob("lint-*.json"))
    assert len(packs) == 1 and json.loads(packs[0].read_text())["format"] == lint_cache.FORMAT
    assert not list((catalog.root / CACHE_DIR).glob(".*.tmp")), "no temporary file left behind"
    warm = lint(catalog, store=store(catalog), evidence_rules=EVIDENCE_RULES)  # as the command lints
    assert warm.cached == warm.files == 72


def test_an_unreadable_pack_is_a_miss_not_an_error(catalog, cli, monkeypatch):
    expected = cli("catalog", "lint", "--json", check=1).stdout
    [pack] = (catalog.root / CACHE_DIR).glob("lint-*.json")
    pack.write_text('{"format": "faultkit/lint-cache/v1", "results": {"x": ')
    assert cli("catalog", "lint", "--json", check=1).stdout == expected
    assert lint(catalog, store=store(catalog), evidence_rules=EVIDENCE_RULES).cached == 12


def test_the_cache_folder_ignores_itself_and_can_be_elsewhere(catalog, tmp_path):
    elsewhere = tmp_path / "cache"
    lint(catalog, store=Store.default(catalog, environ={"FAULTKIT_CACHE_DIR": str(elsewhere)}))
    assert (elsewhere / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not (catalog.root / CACHE_DIR).exists()
    assert Store.default(catalog, environ={}).directory == catalog.root / CACHE_DIR
    assert Path(CACHE_DIR).name == ".faultkit_cache"


def test_a_settled_file_is_not_read_again_and_any_write_to_it_is_seen(catalog, monkeypatch):
    """A warm run stats each file and trusts the digest remembered with that exact status (inode,
    size, mtime, ctime), the way git's index does; a write moves ctime, whatever mtime says."""
    monkeypatch.setattr(lint_cache, "SETTLED_NS", 0)  # the fixture's files count as settled at once
    first = lint(catalog, store=store(catalog))
    reads: list[Path] = []
    real = lint_module.read_bytes
    monkeypatch.setattr(lint_module, "read_bytes", lambda p, *a: reads.append(p) or real(p, *a))
    warm = lint(catalog, store=store(catalog))
    assert warm.cached == 12 and reads == [] and warm.findings == first.findings
    path = catalog.catalog_dir / "minishop" / "ms-cart-port-3.yaml"
    before = path.stat()
    text = path.read_text()
    path.write_text(text.replace("Cart store address port changed", "Cart store address port chAnged"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size, same mtime: only ctime moved
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    edited = lint(catalog, store=store(catalog))
    assert reads == [path] and edited.cached == 11
    assert any("chAnged" in str(e.title) for e in edited.entries)


def test_a_file_changed_lately_is_read_every_time(catalog, monkeypatch):
    """A file whose ctime is younger than SETTLED_NS could change again within one clock tick unseen:
    its status is not remembered, so the next run reads it again."""
    monkeypatch.setattr(lint_cache, "SETTLED_NS", 10**18)  # no file is old enough
    lint(catalog, store=store(catalog))
    pack = json.loads(next((catalog.root / CACHE_DIR).glob("lint-*.json")).read_text())
    assert pack["stats"] == {}
    monkeypatch.setattr(lint_cache, "SETTLED_NS", 0)
    assert lint(catalog, store=store(catalog)).cached == 12  # read and hashed, then remembered
    pack = json.loads(next((catalog.root / CACHE_DIR).glob("lint-*.json")).read_text())
    assert len(pack["stats"]) == 12


def test_the_checked_descriptor_is_kept_so_one_changed_entry_does_not_parse_it(catalog, monkeypatch):
    from faultkit.catalog.rules import context

    loads: list[Path] = []
    real = context.load_descriptor_data
    monkeypatch.setattr(context, "load_descriptor_data", lambda p: loads.append(p) or real(p))
    first = lint(catalog, store=store(catalog))
    assert len(loads) == 1 and len(list((catalog.root / CACHE_DIR).glob("app-*-minishop.json"))) == 1
    path = catalog.catalog_dir / "minishop" / "ms-cart-port-3.yaml"
    path.write_text(path.read_text().replace("Cart store address port changed", "Cart store port is another"))
    edited = lint(catalog, store=store(catalog))
    assert len(loads) == 1 and edited.cached == 11  # the descriptor came from the cache
    assert [f for f in edited.findings if "ms-cart-port-3" not in f.file] == \
        [f for f in first.findings if "ms-cart-port-3" not in f.file]
    side = next((catalog.root / CACHE_DIR).glob("app-*-minishop.json"))
    side.write_text('{"services": 3}')  # a side file this code did not write is a miss, not an error
    path.write_text(path.read_text().replace("port is another", "port is yet another"))
    again = lint(catalog, store=store(catalog))
    assert len(loads) == 2 and again.cached == 11
    _change_descriptor(catalog)  # a new descriptor is a new environment: its old side file goes
    lint(catalog, store=store(catalog))
    assert len(loads) == 3 and len(list((catalog.root / CACHE_DIR).glob("app-*-minishop.json"))) == 1


def test_a_lint_on_forked_processes_reports_what_one_process_does(catalog, monkeypatch):
    """A cold lint of many files checks them on every core (issue 20): the same findings, entries
    and facts, in the same order, with and without the cache."""
    for i in range(30, 60):
        write_entry(catalog, port_entry(i))
    monkeypatch.setattr(lint_module, "PARALLEL_FROM", 4)  # forked from four misses, not 250
    one = lint(catalog, jobs=1)
    two = lint(catalog, jobs=2)
    assert one.files == two.files == 42 and one.errors > 0
    assert (one.findings, one.entries, one.facts) == (two.findings, two.entries, two.facts)
    cold = lint(catalog, store=store(catalog), jobs=2)
    warm = lint(catalog, store=store(catalog), jobs=2)
    assert warm.cached == 42 and cold.findings == warm.findings == one.findings


def test_forked_workers_check_every_item_in_order():
    from faultkit.catalog.lint_workers import map_forked

    pids = map_forked(lambda _: os.getpid(), list(range(10)), 2)
    assert pids[:5] == [os.getpid()] * 5  # the first share in this process
    assert len(set(pids[5:])) == 1 and os.getpid() not in pids[5:]  # the second in a forked one
    assert map_forked(lambda i: i * i, list(range(7)), 3) == [i * i for i in range(7)]
