"""Issue 32: a pull request cannot make itself trusted. An attacker with commit rights to a branch
adds their own key to [trust] and keys/, and signs a forged admission with it; the gate (trust read
from the base branch) refuses the admission and lists the privileged changes in text, --github and
--junit output; `catalog build --trust-base` and `--trust-config` leave the entry out. Real git
repositories, the real command."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import git
import pytest
import yaml

from faultkit.keys import fingerprint, generate, public_pem, signing_key
from tests.factories import port_entry, write_entry
from tests.hostile.refusal import assert_clean
from tests.release.admit import admit


def commit(r: git.Repo, message: str) -> None:
    r.git.add(A=True)
    r.index.commit(message)


@pytest.fixture
def ci_key(tmp_path: Path) -> Path:
    """The project's validator key: its private half outside the repository, as a CI secret is."""
    path = tmp_path / "ci" / "validator.key"
    generate(path)
    return path


@pytest.fixture
def repo(ws, ci_key):
    """`main` trusts only the CI key (keys/ci.pub, its fingerprint in [trust]); one entry admitted by it."""
    (ws.root / "keys").mkdir()
    shutil.copy(ci_key.with_name("validator.key.pub"), ws.root / "keys" / "ci.pub")
    (ws.root / "faultkit.toml").write_text('[trust]\nkeys = ["keys/ci.pub"]\n')
    r = git.Repo.init(ws.root, initial_branch="main")
    with r.config_writer() as c:
        c.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
    commit(r, "catalog")
    r.git.checkout("-b", "pr")
    return r


def attacker_signs_in(ws, r: git.Repo) -> None:
    """The pull request: the suite's own key (the attacker's) added to keys/ and [trust], and an entry
    admitted on a bundle it signed."""
    attacker = signing_key(None)
    (ws.root / "keys" / "attacker.pub").write_text(public_pem(attacker))
    (ws.root / "faultkit.toml").write_text(
        f'[trust]\nkeys = ["keys/ci.pub", "keys/attacker.pub", "{fingerprint(attacker.public_key())}"]\n')
    admit(ws, port_entry(1))
    commit(r, "a fault, and a key to admit it")


def test_a_pull_request_adding_its_own_signer_fails_the_gate(ws, repo, run, tmp_path):
    attacker_signs_in(ws, repo)
    junit = tmp_path / "gate.xml"
    proc = run("gate", "--base", "main", "--json", "--junit", str(junit))
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["passed"] is False
    kinds = {(p["path"], p["kind"]) for p in out["privileged"]}
    assert {("faultkit.toml", "trust"), ("keys/attacker.pub", "keys")} <= kinds
    [case] = out["cases"]
    assert case["recorded"] == "untrusted"
    assert any(f["rule"] == "custody" and "untrusted" in f["message"] for f in case["findings"])
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = {tc.get("name"): tc for tc in suite.iter("testcase")}
    assert suite.get("failures") == "2" and cases["privileged changes"].find("failure") is not None
    assert "keys/attacker.pub" in cases["privileged changes"].find("failure").text
    text = run("gate", "--base", "main").stdout
    assert "faultkit.toml: trust: [trust] changed" in text and "keys/attacker.pub: keys: added" in text
    github = run("gate", "--base", "main", "--github").stdout
    assert "::error file=faultkit.toml,line=1,title=faultkit privileged change::" in github
    assert "::error file=keys/attacker.pub,line=1,title=faultkit privileged change::" in github


def test_a_maintainer_accepting_the_change_does_not_make_the_forgery_trusted(ws, repo, run):
    attacker_signs_in(ws, repo)
    proc = run("gate", "--base", "main", "--accept-privileged", "--json")
    out = json.loads(proc.stdout)
    assert out["accepted"] is True and proc.returncode == 1  # the trust list is still main's
    assert not json.loads(run("gate", "--base", "main", "--accept-privileged", "--json").stdout)["cases"][0]["passed"]
    github = run("gate", "--base", "main", "--accept-privileged", "--github").stdout
    assert "::warning file=faultkit.toml,line=1,title=faultkit privileged change::" in github


def test_catalog_build_takes_trust_from_the_base_or_from_outside(ws, repo, run, ci_key, tmp_path, monkeypatch):
    attacker_signs_in(ws, repo)
    monkeypatch.setenv("FAULTKIT_KEY", str(ci_key))  # the CI validator admits a second entry honestly
    admit(ws, port_entry(2))
    monkeypatch.delenv("FAULTKIT_KEY")
    commit(repo, "an entry the CI validator admitted")
    out = json.loads(run("catalog", "build", "--version", "1", "--trust-base", "main", "--json").stdout)
    assert out["entries"] == 1
    assert [(x["id"], x["reason"]) for x in out["excluded"]] == [("ms-cart-port-1", "untrusted")]
    outside = tmp_path / "trust.toml"
    ci = fingerprint(signing_key(None, {"FAULTKIT_KEY": str(ci_key)}).public_key())
    outside.write_text(f'[trust]\nkeys = ["{ci}"]\n')
    out = json.loads(run("catalog", "build", "--version", "1", "--json",
                         env={"FAULTKIT_TRUST_CONFIG": str(outside)}).stdout)
    assert [(x["id"], x["reason"]) for x in out["excluded"]] == [("ms-cart-port-1", "untrusted")]
    inside = ws.root / "trust.toml"
    inside.write_text(outside.read_text())
    assert_clean(run("catalog", "build", "--trust-config", str(inside)), 1, "inside the repository")
    assert_clean(run("catalog", "build", "--trust-base", "nope"), 1, "'nope' is not a commit")


def test_the_gate_lists_every_privileged_change(ws, repo, run):
    app = ws.apps_dir / "minishop" / "app.yaml"
    data = yaml.safe_load(app.read_text())
    data["build"] = {"lint": ["true"], "test": ["true"]}
    app.write_text(yaml.safe_dump(data, sort_keys=False))
    main = ws.apps_dir / "minishop" / "src" / "cart" / "main.py"
    main.write_text(main.read_text() + "\n# tuned\n")
    (ws.root / "faultkit.toml").write_text('[trust]\nkeys = ["keys/ci.pub"]\n\n[leakage]\nwords = []\n')
    (ws.root / ".github" / "workflows").mkdir(parents=True)
    (ws.root / ".github" / "workflows" / "gate.yml").write_text("on: push\n")
    commit(repo, "privileged, all of it")
    out = json.loads(run("gate", "--base", "main", "--json").stdout)
    kinds = {(p["path"], p["kind"]) for p in out["privileged"]}
    assert kinds == {("apps/minishop/app.yaml", "descriptor"), ("apps/minishop/src/cart/main.py", "app"),
                     ("faultkit.toml", "rules"), (".github/workflows/gate.yml", "workflow")}
    assert out["passed"] is False
    accepted = run("gate", "--base", "main", "--accept-privileged", "--json")
    assert accepted.returncode == 0 and json.loads(accepted.stdout)["passed"] is True


def test_an_invalid_descriptor_fails_even_when_accepted(ws, repo, run):
    (ws.apps_dir / "minishop" / "app.yaml").write_text("name: minishop\nservices: 3\n")
    commit(repo, "a broken descriptor")
    proc = run("gate", "--base", "main", "--accept-privileged", "--json")
    [found] = json.loads(proc.stdout)["privileged"]
    assert proc.returncode == 1 and found["kind"] == "descriptor" and found["error"]


def test_an_edited_validation_block_fails_the_gate(ws, repo, run, ci_key, monkeypatch):
    monkeypatch.setenv("FAULTKIT_KEY", str(ci_key))
    data = admit(ws, port_entry(1))
    commit(repo, "admitted by CI")
    data["validation"]["window_s"] = 300.0
    write_entry(ws, data)
    commit(repo, "a longer window, on paper")
    out = json.loads(run("gate", "--base", "HEAD~1", "--json").stdout)
    [case] = out["cases"]
    assert case["recorded"] == "validation-mismatch" and not case["passed"]


def test_deleted_windows_of_a_bundle_fail_the_gate(ws, repo, run, ci_key, monkeypatch):
    monkeypatch.setenv("FAULTKIT_KEY", str(ci_key))
    admit(ws, port_entry(1))
    commit(repo, "admitted by CI")
    shutil.rmtree(ws.evidence_dir / "ms-cart-port-1" / "run-1" / "windows")
    commit(repo, "lighter evidence")
    out = json.loads(run("gate", "--base", "HEAD~1", "--json").stdout)
    [case] = out["cases"]
    assert case["why"] == "evidence changed: evidence/ms-cart-port-1" and case["recorded"] == "tampered"
    assert any("missing" in f["message"] for f in case["findings"]) and out["passed"] is False
