"""`faultkit author candidates`: every fault the rules allow, ready to validate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from faultkit.apps.descriptor import load_app
from faultkit.apps.manifests import load_manifests, pod_spec
from faultkit.catalog.lint import lint
from faultkit.catalog.model import entry_from_data
from faultkit.catalog.rules.leakage import DEFAULT_WORDS, find_words
from faultkit.catalog.vocab import ACTIONS
from faultkit.validators.app_changes import change_for
from faultkit.workspace import Workspace


def _expected_count(ws: Workspace) -> int:
    """Counted independently from the manifests: per served service, 3 per dependency address,
    2 per credential, 1 per cpu/memory limit, 1 per Service port, and every local action."""
    app = load_app(ws, "minishop")
    served = [s.name for s in app.services if s.name == app.entry or app.callers(s.name)]
    names = set(app.service_names)
    count = 0
    for doc in load_manifests(app.manifests_dir):
        if doc.name not in served:
            continue
        if doc.kind == "Service":
            count += len(doc.body["spec"]["ports"])
            continue
        for c in pod_spec(doc.body)["containers"]:
            for item in c.get("env", []):
                value = str(item.get("value", ""))
                if ":" in value and value.split(":")[0] in names:
                    count += 3
                elif "PASS" in item["name"]:
                    count += 2
            count += len(c.get("resources", {}).get("limits", {}))
    return count + len(served) * sum("local" in a.platforms for a in ACTIONS.values())


def _fill(path) -> None:
    data = yaml.safe_load(path.read_text())
    if str(data["effect"]).startswith("TODO"):
        data["effect"] = "errors"
    if data.get("log") and data["log"]["message"].startswith("TODO"):
        data["log"]["message"] = "request to dependency failed"
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_candidates_count_write_skip_and_lint_after_filling(ws: Workspace, fk) -> None:
    r = fk("author", "candidates", "--app", "minishop", "--json")
    assert r.code == 0, r.err
    found = json.loads(r.out)["candidates"]
    assert len(found) == _expected_count(ws)
    assert {c["status"] for c in found} == {"new"}
    entries = [c["entry"] for c in found]
    assert "loadgenerator" not in {e["target"]["service"] for e in entries}  # the traffic source
    kinds = {e["config"]["kind"] for e in entries if e["mechanism"] == "config"}
    assert kinds == {"dependency-port", "connection-host", "connection-password", "resource-limit",
                     "port-mismatch", "cleared-value"}
    assert {e["direct"]["action"] for e in entries if e["mechanism"] == "direct"} == {
        a.name for a in ACTIONS.values() if "local" in a.platforms}
    for e in entries:
        assert not find_words(e["title"], DEFAULT_WORDS), e["title"]
    by_id = {e["id"]: e for e in entries}
    assert by_id["minishop-cart-env-cartstore-addr-port"]["config"]["new"] == "cartstore:6380"
    assert by_id["minishop-cart-env-cartstore-addr-port"]["category"] == "database-network"
    assert by_id["minishop-frontend-env-cart-addr-port"]["category"] == "dependency"
    assert by_id["minishop-cart-env-cartstore-password"]["category"] == "authentication"

    r = fk("author", "candidates", "--app", "minishop", "--write")
    assert r.code == 0 and f"wrote {len(found)}" in r.out
    folder = ws.catalog_dir / "minishop"
    before = {p: p.read_bytes() for p in folder.glob("*.yaml")}
    assert len(before) == len(found)

    for p in before:
        _fill(p)
    report = lint(ws)
    assert report.errors == 0, [f.render() for f in report.findings][:5]

    filled = {p: p.read_bytes() for p in folder.glob("*.yaml")}
    r = fk("author", "candidates", "--app", "minishop", "--write", "--json")
    out = json.loads(r.out)
    assert out["written"] == [] and {c["status"] for c in out["candidates"]} == {"exists"}
    assert {p: p.read_bytes() for p in folder.glob("*.yaml")} == filled  # never overwritten


def test_same_change_under_another_id_is_a_duplicate(ws: Workspace, fk) -> None:
    assert fk("author", "config", "--app", "minishop", "--workload", "cart", "--field", "env.CARTSTORE_ADDR",
              "--value", "cartstore:6380", "--kind", "dependency-port", "--id", "minishop-store-port").code == 0
    out = json.loads(fk("author", "candidates", "--app", "minishop", "--json").out)
    dup = next(c for c in out["candidates"] if c["id"] == "minishop-cart-env-cartstore-addr-port")
    assert dup["status"] == "duplicate" and "minishop-store-port.yaml" in dup["note"]


BOOKINFO = Path(__file__).resolve().parent.parent / "fixtures" / "manifests" / "bookinfo.yaml"


def test_versions_give_distinct_ids_and_drafts_lint_clean(ws: Workspace, fk) -> None:
    assert fk("apps", "import", "--name", "bookinfo", str(BOOKINFO)).code == 0
    r = fk("author", "candidates", "--app", "bookinfo", "--drafts", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    ids = [c["id"] for c in out["candidates"]]
    assert len(ids) == len(set(ids)) and {c["status"] for c in out["candidates"]} == {"new"}
    assert len(out["written"]) == len(ids)
    # one direct candidate per action for reviews, a limit candidate per version's workload
    assert ids.count("bookinfo-reviews-cpu-stress") == 1
    limits = {c["id"]: c["entry"]["target"]["workload"] for c in out["candidates"] if "limits-memory" in c["id"]}
    assert limits == {f"bookinfo-reviews-{v}-resources-limits-memory-limit": f"reviews-{v}" for v in ("v1", "v2", "v3")}
    report = json.loads(fk("catalog", "lint", "--drafts", "--json").out)
    assert report["errors"] == 0 and report["files"] == len(ids)


def test_lint_reports_two_drafts_of_one_id_as_an_error(ws: Workspace, fk) -> None:
    assert fk("apps", "import", "--name", "bookinfo", str(BOOKINFO)).code == 0
    assert fk("author", "candidates", "--app", "bookinfo", "--drafts").code == 0
    folder = ws.root / "drafts" / "bookinfo"
    (folder / "copy.yaml").write_bytes((folder / "bookinfo-reviews-cpu-stress.yaml").read_bytes())
    r = fk("catalog", "lint", "--drafts", "--json")
    errors = [f for f in json.loads(r.out)["findings"] if f["severity"] == "error"]
    first = "drafts/bookinfo/bookinfo-reviews-cpu-stress.yaml"
    assert r.code == 1 and errors == [{
        "file": "drafts/bookinfo/copy.yaml", "line": 2, "path": "id", "rule": "unique_ids", "severity": "error",
        "message": f"id 'bookinfo-reviews-cpu-stress' is already used by {first}"}]


def test_a_candidate_whose_id_an_earlier_one_has_is_refused_not_written() -> None:
    from faultkit.authoring.candidates import FaultCandidate, _unique

    first = FaultCandidate({"id": "a-b-cpu-stress", "app": "a", "target": {"service": "b"},
                            "direct": {"action": "cpu-stress"}}, "new")
    second = _unique(FaultCandidate({**first.data}, "new"), [first])
    assert second.status == "collision"
    assert second.note == "id already taken by another candidate (b cpu-stress); not written"


def _workload(name: str, port: int, env: dict[str, str]) -> list[dict]:
    container = {"name": name, "image": f"example/{name}:1.0", "env": [{"name": k, "value": v} for k, v in env.items()]}
    return [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
             "spec": {"selector": {"matchLabels": {"app": name}},
                      "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}}},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
             "spec": {"selector": {"app": name}, "ports": [{"name": "main", "port": port}]}}]


def test_every_skipped_service_is_listed_with_its_reason(ws: Workspace, fk, tmp_path: Path) -> None:
    """A queue consumer nothing calls gets no candidate, and says so, as the load generator does."""
    manifest = tmp_path / "shop.yaml"
    manifest.write_text(yaml.safe_dump_all([
        *_workload("frontend", 80, {"ORDERS_ADDR": "orders:8080"}),
        *_workload("orders", 8080, {"KAFKA_ADDR": "kafka:9092"}),
        *_workload("kafka", 9092, {}),
        *_workload("mailer", 8080, {"KAFKA_ADDR": "kafka:9092"}),  # consumes the queue; nothing calls it
        *_workload("loadgenerator", 8089, {"FRONTEND_ADDR": "frontend:80"}),
    ]))
    assert fk("apps", "import", "--name", "shop", str(manifest)).code == 0
    out = json.loads(fk("author", "candidates", "--app", "shop", "--json").out)
    traffic = ("nothing calls it and it is not the entry, so it is taken for a traffic source; "
               "if it serves (a queue consumer), add the edge that reaches it to the descriptor")
    assert out["skipped"] == [
        {"service": "mailer", "reason": traffic},
        {"service": "loadgenerator", "reason": "a load generator (the descriptor's load): it makes the traffic, "
                                               "a fault there is not a fault of the application"},
    ]
    targets = {c["entry"]["target"]["service"] for c in out["candidates"]}
    assert targets == {"frontend", "orders", "kafka"}
    human = fk("author", "candidates", "--app", "shop")
    assert f"skipped: mailer: {traffic}" in human.out.splitlines()
    assert human.out.rstrip().endswith("; 2 services skipped")


def test_an_address_loaded_from_a_configmap_is_written_over_it_and_the_revert_removes_it(
        ws: Workspace, fk, tmp_path: Path) -> None:
    """Bank of Anthos' addresses and JDBC URLs live in ConfigMaps its containers load with envFrom.
    A candidate writes the var in the workload, where it shadows the ConfigMap's value; its revert
    removes the var again. A ConfigMap's address the service never calls by (no edge) is left alone."""
    frontend, frontend_svc = _workload("frontend", 80, {"LOG_LEVEL": "info"})
    frontend["spec"]["template"]["spec"]["containers"][0]["envFrom"] = [{"configMapRef": {"name": "api-config"}}]
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "api-config"},
              "data": {"LEDGER_ADDR": "ledger:8080", "BANK_NAME": "Bank"}}
    manifest = tmp_path / "bank.yaml"
    manifest.write_text(yaml.safe_dump_all([frontend, frontend_svc, config, *_workload("ledger", 8080, {})]))
    assert fk("apps", "import", "--name", "bank", str(manifest)).code == 0
    assert load_app(ws, "bank").edges == (("frontend", "ledger"),)
    out = json.loads(fk("author", "candidates", "--app", "bank", "--write", "--json").out)
    loaded = {c["id"]: c["entry"] for c in out["candidates"] if c["entry"].get("config", {}).get("loaded_from")}
    assert sorted(loaded) == ["bank-frontend-env-ledger-addr-host", "bank-frontend-env-ledger-addr-port"]
    port = loaded["bank-frontend-env-ledger-addr-port"]
    assert port["config"] == {"workload": "frontend", "container": "frontend", "field": "env.LEDGER_ADDR",
                              "old": "ledger:8080", "new": "ledger:8081", "kind": "dependency-port",
                              "loaded_from": "ConfigMap/api-config"}
    assert port["recovery"].startswith("Remove env.LEDGER_ADDR from frontend/frontend, where it shadows")
    assert entry_from_data(port).config.written is None
    change = change_for(entry_from_data(port))
    assert (change.value, change.undo_value) == ("ledger:8081", None)
    for written in (ws.catalog_dir / "bank").glob("*.yaml"):
        _fill(written)
    report = json.loads(fk("catalog", "lint", "--json").out)
    assert [f for f in report["findings"] if f["severity"] == "error" and "/bank/" in f["file"]] == []
    # an entry that names another ConfigMap, or a value the ConfigMap does not hold, is refused by lint
    path = ws.catalog_dir / "bank" / "bank-frontend-env-ledger-addr-port.yaml"
    data = yaml.safe_load(path.read_text())
    data["config"]["loaded_from"] = "ConfigMap/other"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    data["config"]["loaded_from"], data["config"]["old"] = "ConfigMap/api-config", "ledger:9090"
    other = path.with_name("bank-frontend-env-ledger-addr-old.yaml")
    other.write_text(yaml.safe_dump({**data, "id": "bank-frontend-env-ledger-addr-old"}, sort_keys=False))
    findings = json.loads(fk("catalog", "lint", "--json").out)["findings"]
    messages = {(Path(f["file"]).name, f["path"]): f["message"] for f in findings if f["severity"] == "error"}
    assert messages[(path.name, "config.loaded_from")] == "the container loads it from ConfigMap/api-config, " \
                                                          "not ConfigMap/other"
    assert messages[(other.name, "config.old")] == "ConfigMap/api-config says 'ledger:8080', the entry says 'ledger:9090'"


def test_candidates_start_from_the_descriptors_probe(ws: Workspace, fk, tmp_path: Path) -> None:
    """An app whose users log in first says so once, in its descriptor, not in every candidate."""
    manifest = tmp_path / "bank.yaml"
    manifest.write_text(yaml.safe_dump_all([*_workload("frontend", 80, {"LEDGER_ADDR": "ledger:8080"}),
                                            *_workload("ledger", 8080, {})]))
    assert fk("apps", "import", "--name", "bank", str(manifest)).code == 0
    descriptor = ws.root / "apps" / "bank" / "app.yaml"
    probe = {"service": "frontend", "path": "/home", "expect_text": ["Current Balance"], "error_text": ["$---"],
             "setup": [{"method": "POST", "path": "/login", "form": {"username": "testuser", "password": "pw"}}]}
    data = yaml.safe_load(descriptor.read_text())
    descriptor.write_text(yaml.safe_dump({**data, "probe": probe}, sort_keys=False))
    out = json.loads(fk("author", "candidates", "--app", "bank", "--json").out)
    assert out["candidates"] and all(c["entry"]["probe"] == probe for c in out["candidates"])
    # checked as an entry's probe, and its service must be one of the app's
    for bad, says in (({**probe, "body": {"a": 1}, "form": {"a": "1"}}, "probe: give one of body or form, not both"),
                      ({**probe, "service": "frontnd"}, "probe.service: 'frontnd' is not a service")):
        descriptor.write_text(yaml.safe_dump({**data, "probe": bad}, sort_keys=False))
        r = fk("apps", "show", "bank")
        assert r.code != 0 and says in r.err and len(r.err.strip().splitlines()) == 1, r.err


def test_an_upstream_apps_config_entries_lint_as_unchecked_where_no_copy_of_its_manifests_is(
        ws: Workspace, fk, tmp_path: Path) -> None:
    """A catalog of an app derived from upstream manifests keeps only their digests: a checkout without
    the user's copy (CI, a reviewer) cannot check a config entry against them, which is not the
    entry's fault, so even --strict passes, saying what was not checked. A missing copy of an app's
    own manifests stays an error."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    (upstream / "bank.yaml").write_text(yaml.safe_dump_all([*_workload("frontend", 80, {"LEDGER_ADDR": "ledger:8080"}),
                                                           *_workload("ledger", 8080, {})]))
    assert fk("apps", "import", "--name", "bank", "--upstream", "example/bank@v1", str(upstream)).code == 0
    copy = ws.root / "apps" / "bank" / "manifests"
    shutil.copytree(upstream, copy)
    assert fk("author", "candidates", "--app", "bank", "--write").code == 0
    for written in (ws.catalog_dir / "bank").glob("*.yaml"):
        _fill(written)
    shutil.rmtree(copy)
    r = fk("catalog", "lint", "--strict", "--no-cache", "--json")
    report = json.loads(r.out)
    unchecked = [f for f in report["findings"] if "/bank/" in f["file"]]
    assert r.code == 0 and report["errors"] == 0, r.out
    assert unchecked and {(f["rule"], f["severity"]) for f in unchecked} == {("unchecked", "warning")}
    assert "no copy is in apps/bank/manifests (faultkit apps verify bank --manifests DIR)" in unchecked[0]["message"]
    descriptor = ws.root / "apps" / "bank" / "app.yaml"
    data = yaml.safe_load(descriptor.read_text())
    del data["upstream"]
    descriptor.write_text(yaml.safe_dump(data, sort_keys=False))
    r = fk("catalog", "lint", "--no-cache", "--json")
    assert r.code == 1 and "manifests folder not found" in r.out


def test_a_limit_below_the_containers_request_is_no_candidate_and_lint_refuses_it(ws: Workspace, fk,
                                                                                   tmp_path: Path) -> None:
    """The API server refuses a limit below the request (Bank of Anthos' userservice requests 260m of
    CPU; a tenth of its 500m limit would be 50m), so such a change is never a fault."""
    web, svc = _workload("web", 80, {})
    web["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "260m", "memory": "32Mi"}}
    manifest = tmp_path / "one.yaml"
    manifest.write_text(yaml.safe_dump_all([web, svc]))
    assert fk("apps", "import", "--name", "one", str(manifest)).code == 0
    out = json.loads(fk("author", "candidates", "--app", "one", "--json").out)
    fields = {c["entry"]["config"]["field"]: c["entry"]["config"]["new"] for c in out["candidates"]
              if c["entry"]["mechanism"] == "config"}
    assert "resources.limits.cpu" not in fields and fields["resources.limits.memory"] == "64Mi"
    r = fk("author", "config", "--app", "one", "--workload", "web", "--field", "resources.limits.cpu",
           "--value", "50m", "--kind", "resource-limit")
    assert r.code != 0 and "50m is below the container's request of 260m" in r.err, r.err
