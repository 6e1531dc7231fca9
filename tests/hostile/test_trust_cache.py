"""Issue 32: a lint cache a pull request commits is never an answer, and never a way out of the
repository. Each attack runs the real `faultkit catalog lint` (or the gate) on a real repository."""

from __future__ import annotations

import json

import git

from faultkit.catalog.lint_cache import CACHE_DIR, Store, sealed
from tests.factories import entry_data, port_entry, write_entry
from tests.hostile.refusal import assert_clean

LEAKY = "cart store request failed: fault injected"


def leaky(ws):
    write_entry(ws, entry_data(log={"message": LEAKY, "service": "cart"},
                               evidence={"metrics": ["x"], "logs": [LEAKY]}))


def errors(proc) -> int:
    return json.loads(proc.stdout)["errors"]


def test_a_pack_forged_by_another_user_is_not_read(ws, run, tmp_path):
    """The attacker lints in their own cache home, empties the leaky entry's findings (their pack
    then says 0 errors to them), and commits the pack; our lint finds the leak anyway."""
    leaky(ws)
    attacker = {"FAULTKIT_CACHE_HOME": str(tmp_path / "attacker-home")}
    assert errors(run("catalog", "lint", "--json", env=attacker)) >= 1
    [pack] = (ws.root / CACHE_DIR).glob("lint-*.json")
    data = json.loads(pack.read_text())
    for result in data["results"].values():
        result["findings"] = []
    body = json.dumps({k: v for k, v in data.items() if k != "mac"}, sort_keys=True, separators=(",", ":"))
    key = (tmp_path / "attacker-home" / "lint-cache.key").read_bytes()
    pack.write_bytes(sealed(key, body.encode()))
    assert errors(run("catalog", "lint", "--json", env=attacker)) == 0  # the forgery works on its maker
    proc = run("catalog", "lint", "--json")  # this user's own cache home (the suite's)
    assert proc.returncode == 1 and errors(proc) >= 1
    assert any("'fault'" in f["message"] for f in json.loads(proc.stdout)["findings"])


def test_a_committed_cache_folder_is_a_privileged_change_and_the_gate_still_finds_the_leak(ws, run, tmp_path):
    write_entry(ws, port_entry(1))
    r = git.Repo.init(ws.root, initial_branch="main")
    with r.config_writer() as c:
        c.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
    r.git.add(A=True)
    r.index.commit("catalog")
    leaky(ws)
    attacker = {"FAULTKIT_CACHE_HOME": str(tmp_path / "attacker-home")}
    run("catalog", "lint", env=attacker)
    r.git.add(A=True)
    r.git.add("--force", CACHE_DIR)
    r.index.commit("a fault and a cache")
    proc = run("gate", "--base", "HEAD~1", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["passed"] is False
    [case] = out["cases"]
    assert any(f["rule"] == "leakage" for f in case["findings"])
    assert any(p["path"].startswith(f"{CACHE_DIR}/") and p["kind"] == "cache" for p in out["privileged"])


def test_a_cache_folder_symlinked_out_of_the_repository_is_not_written_through(ws, run, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws.root / CACHE_DIR).symlink_to(outside)
    write_entry(ws, port_entry(1))
    first = run("catalog", "lint", "--json")
    assert first.returncode == 0, first.stderr
    assert run("catalog", "lint", "--json").stdout == first.stdout
    assert list(outside.iterdir()) == [] and (ws.root / CACHE_DIR).is_symlink()


def test_a_lock_symlinked_out_of_the_repository_is_not_followed(ws, run, tmp_path):
    outside = tmp_path / "outside-lock"
    (ws.root / CACHE_DIR).mkdir()
    (ws.root / CACHE_DIR / "lock").symlink_to(outside)
    write_entry(ws, port_entry(1))
    assert run("catalog", "lint", "--json").returncode == 0
    assert not outside.exists()


def test_a_deeply_nested_pack_is_a_miss_or_one_line_never_a_crash(ws, run):
    write_entry(ws, port_entry(1))
    expected = run("catalog", "lint", "--json")
    [pack] = (ws.root / CACHE_DIR).glob("lint-*.json")
    deep = b'{"format":"faultkit/lint-cache/v1","results":' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    pack.write_bytes(deep)  # not sealed by this user: a miss
    assert run("catalog", "lint", "--json").stdout == expected.stdout
    pack.write_bytes(sealed(Store(ws.root / CACHE_DIR).key or b"", deep))  # sealed by this user's key
    assert_clean(run("catalog", "lint", "--json"), 1, "nested too deeply", "--no-cache")
