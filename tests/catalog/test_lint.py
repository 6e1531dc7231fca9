"""`faultkit catalog lint` on real files: every problem at once, with file, line and path."""

from __future__ import annotations

import json
from pathlib import Path

from faultkit.catalog.lint import lint
from tests.factories import entry_data, write_entry


def messages(ws, *paths):
    return [f.render() for f in lint(ws, [Path(p) for p in paths]).findings]


def test_valid_entry_is_clean(ws, cli):
    write_entry(ws, entry_data())
    proc = cli("catalog", "lint", check=0)
    assert "1 files, 0 errors, 0 warnings" in proc.stdout


def test_misspelt_service_gets_suggestion_with_line(ws):
    data = entry_data(target={"service": "chekout"})
    write_entry(ws, data)
    found = messages(ws)
    assert any("catalog/minishop/ms-cart-store-port.yaml:9: target.service: 'chekout' is not a service of "
               "minishop (did you mean 'checkout'?)" in m for m in found), found


def test_every_problem_reported_at_once(ws, cli):
    data = entry_data(category="bugs", level="replica", scope=["cart", "payment"])
    data["probe"]["service"] = "nowhere"
    write_entry(ws, data)
    proc = cli("catalog", "lint", "--json", check=1)
    report = json.loads(proc.stdout)
    paths = {f["path"] for f in report["findings"]}
    assert {"category", "level"} <= paths
    assert report["errors"] >= 2


def test_scope_beyond_dependency_graph(ws):
    write_entry(ws, entry_data(scope=["cart", "payment"]))
    found = messages(ws)
    assert any("scope[1]: 'payment' does not reach cart" in m for m in found), found


def test_malformed_yaml_one_line_with_location(ws, cli):
    path = ws.catalog_dir / "minishop" / "bad.yaml"
    path.write_text("id: x\ntitle: [unclosed\n")
    proc = cli("catalog", "lint", check=1)
    assert "catalog/minishop/bad.yaml:3: (file): malformed YAML" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_wrong_type(ws):
    write_entry(ws, entry_data(scope="cart"))
    assert any("scope: expected array, found str 'cart'" in m for m in messages(ws))


def test_unknown_key_warns_then_fails_with_strict(ws, cli):
    write_entry(ws, entry_data(severity="high"))
    proc = cli("catalog", "lint", check=0)
    assert "warning" in proc.stdout and "unknown key 'severity'" in proc.stdout
    cli("catalog", "lint", "--strict", check=1)


def test_folder_where_file_expected(ws, cli):
    (ws.catalog_dir / "minishop" / "dir.yaml").mkdir()
    proc = cli("catalog", "lint", check=1)
    assert "is a folder, expected a file" in proc.stdout


def test_binary_file(ws, cli):
    (ws.catalog_dir / "minishop" / "bin.yaml").write_bytes(b"id: \x00\x01\x02")
    proc = cli("catalog", "lint", check=1)
    assert "is a binary file" in proc.stdout


def test_huge_file_refused_without_reading_it_all(ws, cli):
    path = ws.catalog_dir / "minishop" / "huge.yaml"
    with path.open("wb") as f:
        f.truncate(50 * 1024 * 1024)
    proc = cli("catalog", "lint", check=1)
    assert "too large" in proc.stdout


def test_patch_path_absolute_or_dotdot(ws):
    for ref, expected in (("/etc/passwd", "absolute"), ("patches/../../x.diff", "contains '..'")):
        data = code_entry(ref)
        write_entry(ws, data)
        assert any(f"code.patch: patch {ref!r}" in m and expected in m for m in messages(ws)), ref


def test_patch_outside_target_source(ws):
    diff = ws.patches_dir / "minishop" / "ms-cart-x.diff"
    diff.write_text("--- a/src/payment/main.py\n+++ b/src/payment/main.py\n@@ -1 +1,2 @@\n x\n+y = 'marker-text'\n")
    write_entry(ws, code_entry("patches/minishop/ms-cart-x.diff"))
    assert any("touches files outside src/cart/: src/payment/main.py" in m for m in messages(ws))


def test_duplicate_ids_across_files(ws):
    write_entry(ws, entry_data(), name="a.yaml")
    write_entry(ws, entry_data(), name="b.yaml")
    found = messages(ws)
    assert any("id 'ms-cart-store-port' is already used by catalog/minishop/a.yaml" in m for m in found), found


def test_same_change_twice_is_a_duplicate(ws):
    write_entry(ws, entry_data())
    write_entry(ws, entry_data(id="ms-cart-other"))
    assert any("makes the same change to the same artifact" in m for m in messages(ws))


def test_config_refusals(ws):
    data = entry_data()
    data["config"] = {**data["config"], "field": "env.OTEL_SERVICE_NAME", "old": "cart", "new": "x"}
    write_entry(ws, data)
    assert any("telemetry setting" in m for m in messages(ws))


def test_config_old_value_must_match_manifest(ws):
    data = entry_data()
    data["config"] = {**data["config"], "old": "cartstore:1"}
    write_entry(ws, data)
    assert any("config.old: the manifest says 'cartstore:6379'" in m for m in messages(ws))


def test_lint_writes_nothing_but_its_cache(ws, cli):
    write_entry(ws, entry_data(category="nope"))

    def files() -> list[tuple[Path, int]]:
        return sorted((p, p.stat().st_mtime_ns) for p in ws.root.rglob("*") if p.is_file())

    before = files()
    cli("catalog", "lint", "--no-cache", check=1)
    assert files() == before
    cli("catalog", "lint", check=1)
    assert [f for f in files() if ".faultkit_cache" not in f[0].parts] == before
    assert (ws.root / ".faultkit_cache" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_usage_error_exit_2(ws, cli):
    proc = cli("catalog", "lint", "--no-such-flag")
    assert proc.returncode == 2


def code_entry(patch: str) -> dict:
    data = entry_data(id="ms-cart-x", mechanism="code", category="code-bug")
    del data["config"]
    data["artifact"] = {"kind": "source-file", "ref": "src/cart/main.py"}
    data["artifact_check"] = {"kind": "build", "service": "cart", "absent_marker": "marker-text"}
    data["code"] = {"patch": patch, "update": "Cache carts", "defect": "Assumes carts never change",
                    "requests": ["GET /cart"], "marker": "marker-text"}
    return data


def test_giveaway_title_is_a_warning_not_an_error(ws, cli):
    write_entry(ws, entry_data(title="Broken cart store port"))
    proc = cli("catalog", "lint", "--json", check=0)
    [finding] = json.loads(proc.stdout)["findings"]
    assert (finding["path"], finding["severity"], finding["rule"]) == ("title", "warning", "title")
    cli("catalog", "lint", "--strict", check=1)


def test_a_latency_bound_is_checked_against_the_probe_timeout(ws, cli):
    data = entry_data()
    data["probe"].update(expect_latency_ms=800, timeout_s=3)
    write_entry(ws, data)
    assert "1 files, 0 errors" in cli("catalog", "lint", check=0).stdout
    data["probe"].update(expect_latency_ms=3000)  # never what fails an attempt: the timeout cuts it off first
    write_entry(ws, data)
    assert any("probe.expect_latency_ms: 3000 ms is not below the probe's timeout (3 s)" in m for m in messages(ws))
    data["probe"].update(expect_latency_ms=0)
    write_entry(ws, data)
    assert any("probe.expect_latency_ms" in m for m in messages(ws))
