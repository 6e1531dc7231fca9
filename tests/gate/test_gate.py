"""`faultkit gate` on real git repositories: only what changed, a summary, JUnit, annotations."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import git
import pytest

from faultkit.catalog.model import Entry, entry_from_data
from faultkit.errors import UsageError
from faultkit.gate.core import find_validator, run_gate
from faultkit.platforms import KubernetesOptions
from tests.factories import cart_prefix_entry, port_entry, write_entry
from tests.helpers.cli import run_cli
from tests.helpers.shipped import all_bundles
from tests.release.admit import admit

config = port_entry
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo(ws):
    """The workspace as a git repository with three committed entries on `main`."""
    for i in (1, 2, 3):
        write_entry(ws, config(i))
    r = git.Repo.init(ws.root, initial_branch="main")
    with r.config_writer() as c:
        c.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
    r.git.add(A=True)
    r.index.commit("catalog")
    return r


def commit(r: git.Repo, message: str = "change") -> None:
    r.git.add(A=True)
    r.index.commit(message)


def test_only_changed_entries_are_checked_and_a_good_change_passes(ws, repo, cli):
    write_entry(ws, config(4))
    commit(repo)
    proc = cli("gate", "--base", "HEAD~1", "--json", check=0)
    out = json.loads(proc.stdout)
    assert [c["id"] for c in out["cases"]] == ["ms-cart-port-4"]
    assert out["passed"] is True
    human = cli("gate", "--base", "HEAD~1", check=0).stdout
    assert "ms-cart-port-4" in human and "1 changed entries, 0 rejected" in human


def test_duplicate_of_an_unchanged_entry_is_rejected_with_junit_and_annotations(ws, repo, cli, tmp_path):
    dup = config(9)
    dup["config"]["new"] = "cartstore:6391"  # the same change as ms-cart-port-1
    write_entry(ws, dup)
    bad = config(5, scope=["cart", "payment"])
    write_entry(ws, bad)
    commit(repo)
    junit = tmp_path / "gate.xml"
    proc = cli("gate", "--base", "HEAD~1", "--junit", str(junit), "--github", check=1)
    assert "::error file=catalog/minishop/ms-cart-port-9.yaml,line=1,title=faultkit duplicates::" in proc.stdout
    assert "ms-cart-port-1.yaml" in proc.stdout
    assert "::error file=catalog/minishop/ms-cart-port-5.yaml,line=" in proc.stdout
    assert "2 changed entries, 2 rejected" in proc.stdout
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "2"
    cases = {tc.get("name"): tc for tc in suite.iter("testcase")}
    assert "payment" in cases["ms-cart-port-5"].find("failure").text
    assert cases["ms-cart-port-9"].get("file") == "catalog/minishop/ms-cart-port-9.yaml"


def test_changed_patch_brings_in_its_entry(ws, repo, cli):
    patch = ws.patches_dir / "minishop" / "ms-cart-prefix.diff"
    patch.write_text(
        "--- a/src/cart/main.py\n+++ b/src/cart/main.py\n@@ -11,2 +11,3 @@\n"
        ' SERVICE = "cart"\n MAX_QUANTITY = 999\n+_PREFIX = "cart-v2:"\n'
    )
    write_entry(ws, cart_prefix_entry())
    commit(repo, "code fault")
    patch.write_text(patch.read_text().replace('"cart-v2:"', '"cart-v3:"'))  # marker no longer added
    commit(repo, "edit the patch only")
    out = json.loads(cli("gate", "--base", "HEAD~1", "--json", check=1).stdout)
    [case] = out["cases"]
    assert case["id"] == "ms-cart-prefix" and case["why"] == "patch changed: patches/minishop/ms-cart-prefix.diff"
    assert any(f["path"] == "code.marker" for f in case["findings"])


def test_removed_entry_is_a_note_not_a_case(ws, repo, cli):
    (ws.catalog_dir / "minishop" / "ms-cart-port-2.yaml").unlink()
    commit(repo)
    out = json.loads(cli("gate", "--base", "HEAD~1", "--json", check=0).stdout)
    assert out["cases"] == [] and out["notes"] == ["catalog/minishop/ms-cart-port-2.yaml: entry removed"]


def test_unknown_ref_is_a_one_line_usage_error(ws, repo, cli):
    proc = cli("gate", "--base", "origin/nope", check=2)
    assert proc.stderr.count("\n") == 1 and "--base 'origin/nope' is not a commit" in proc.stderr


def test_dirty_working_tree_is_refused(ws, repo, cli):
    path = ws.catalog_dir / "minishop" / "ms-cart-port-1.yaml"
    path.write_text(path.read_text().replace("Cart store", "Cart  store"))
    proc = cli("gate", "--base", "HEAD", check=1)
    assert proc.stderr.count("\n") == 1
    assert "working tree is dirty (catalog/minishop/ms-cart-port-1.yaml)" in proc.stderr


def test_untracked_entry_is_refused_but_untracked_output_is_not(ws, repo, cli):
    (ws.root / "gate.xml").write_text("<old/>")
    cli("gate", "--base", "HEAD", check=0)
    write_entry(ws, config(7))
    proc = cli("gate", "--base", "HEAD", check=1)
    assert "ms-cart-port-7.yaml" in proc.stderr and "dirty" in proc.stderr


def test_validation_is_an_injected_callable(ws, repo):
    write_entry(ws, config(4))
    write_entry(ws, config(5))
    commit(repo)
    seen: list[str] = []

    def validator(workspace, entry: Entry):
        seen.append(entry.id)
        ok = entry.id.endswith("4")
        return {
            "status": "admitted" if ok else "rejected",
            "failed_rules": [] if ok else ["server-errors"],
            "rules": [{"rule": "server-errors", "passed": ok, "measured": 6.0 if ok else 0.5, "threshold": 4.0}],
        }

    result = run_gate(ws, "HEAD~1", validator)
    assert seen == ["ms-cart-port-4", "ms-cart-port-5"]
    by_id = {c.id: c for c in result.cases}
    assert by_id["ms-cart-port-4"].passed and not by_id["ms-cart-port-5"].passed
    assert by_id["ms-cart-port-5"].failed_rules == ("server-errors: measured 0.5, threshold 4.0",)
    assert not result.passed


def test_gate_reports_the_verdicts_own_failed_rules_not_screening_criteria(ws, repo):
    """Issue 12: a shipped admitted verdict whose screen-restart did not hold (one screening criterion
    suffices) has failed_rules []; the gate must report it with no failed rule. A rejected verdict
    reports exactly its failed_rules, each with the measured value of its counted record."""
    verdicts = [json.loads((b / "verdict.json").read_text()) for b in all_bundles()]
    shipped = next(v for v in verdicts if v["status"] == "admitted"
                   and any(r["rule"] == "screen-restart" and not r["passed"] for r in v["rules"]))
    assert shipped["failed_rules"] == []
    rejected = {**shipped, "status": "rejected", "failed_rules": ["keeps-serving"],
                "rules": [*shipped["rules"],
                          {"rule": "keeps-serving", "passed": False, "measured": 1.0, "threshold": 3.0,
                           "cycle": 0, "counted": False},
                          {"rule": "keeps-serving", "passed": False, "measured": 2.0, "threshold": 3.0,
                           "cycle": 1, "counted": True}]}
    write_entry(ws, config(4))
    write_entry(ws, config(5))
    commit(repo)
    verdicts = {"ms-cart-port-4": shipped, "ms-cart-port-5": rejected}
    result = run_gate(ws, "HEAD~1", lambda workspace, entry: verdicts[entry.id])
    by_id = {c.id: c for c in result.cases}
    assert by_id["ms-cart-port-4"].validation == "admitted" and by_id["ms-cart-port-4"].failed_rules == ()
    assert by_id["ms-cart-port-4"].passed
    assert by_id["ms-cart-port-5"].failed_rules == ("keeps-serving: measured 2.0, threshold 3.0",)


def test_recorded_verdict_is_reported(ws, repo):
    admit(ws, config(4))
    commit(repo)
    [case] = run_gate(ws, "HEAD~1").cases
    assert case.recorded == "admitted" and case.validation == "skipped"


def test_validate_needs_a_running_platform(ws, repo, cli):
    write_entry(ws, config(4))
    commit(repo)
    proc = cli("gate", "--base", "HEAD~1", "--validate", "--window", "5s", check=1)
    assert "the local platform is not up; run `faultkit up --app minishop` first" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_github_step_summary_is_written(ws, repo, tmp_path):

    write_entry(ws, config(4))
    commit(repo)
    summary = tmp_path / "summary.md"
    env = {**__import__("os").environ, "GITHUB_STEP_SUMMARY": str(summary)}
    proc = run_cli("gate", "--base", "HEAD~1", "--github", cwd=ws.root, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "| ms-cart-port-4 |" in summary.read_text()


def test_validate_takes_the_platforms_options_and_opens_the_platform_with_them(ws, repo, cli, tmp_path):
    """The gate's validator opens the platform with the options the gate was given, not its defaults:
    the command takes them (--kubeconfig was 'no such option'), and the core hands them to open_platform,
    which refuses another platform's options in one line."""
    write_entry(ws, config(4))
    commit(repo)
    proc = cli("gate", "--base", "HEAD~1", "--validate", "--window", "5s", "--platform", "kubernetes",
               "--kubeconfig", str(tmp_path / "kubeconfig"), "--prometheus", "http://127.0.0.1:9", check=1)
    assert "the kubernetes platform is not up; run `faultkit up --platform kubernetes" in proc.stdout, proc.stdout
    entry = entry_from_data(config(4))
    validator = find_validator(5, platform="local", options=KubernetesOptions(kubeconfig=str(tmp_path / "k")))
    with pytest.raises(UsageError, match="options of the kubernetes platform given for the local platform"):
        validator(ws, entry)


def test_whether_alert_raised_decides_is_read_from_the_base_not_the_pull_request(ws, repo, cli):
    """REF's faultkit.toml asks alert-raised to decide: a pull request that turns it off still needs
    --alerts; one that turns it on where REF does not is not held to it (issue 31)."""
    config_file = ws.root / "faultkit.toml"
    config_file.write_text("[validate]\nalert_raised = true\n")
    commit(repo, "the catalog asks alert-raised to decide")
    config_file.write_text("[validate]\nalert_raised = false\n")
    write_entry(ws, config(4))
    commit(repo)
    proc = cli("gate", "--base", "HEAD~1", "--validate", "--window", "5s", "--json", check=1)
    (case,) = json.loads(proc.stdout)["cases"]
    assert case["passed"] is False and case["validation"] == "error", case
    assert "alert_raised = true" in proc.stdout and "--alerts URL" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    config_file.write_text("[validate]\nalert_raised = true\n")
    write_entry(ws, config(5))
    commit(repo)  # REF (HEAD~1) said false
    proc = cli("gate", "--base", "HEAD~1", "--validate", "--window", "5s", check=1)
    assert "the local platform is not up" in proc.stdout, proc.stdout + proc.stderr
