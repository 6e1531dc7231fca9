"""Dependencies beyond the manifest env (ConfigMaps, source), classification of services that are
not the application, and the import command's report of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from faultkit.apps.descriptor import load_app, load_descriptor
from faultkit.apps.importer import import_manifests
from faultkit.apps.references import text_references, with_defaults
from faultkit.authoring.candidates import candidates
from faultkit.workspace import Workspace

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MANIFESTS = FIXTURES / "manifests"


def _found(d: dict) -> dict[tuple[str, str], str | None]:
    return {(e[0], e[1]): (e[2] if len(e) > 2 else None) for e in d["edges"]}


def test_configmaps_a_workload_loads_are_dependencies_marked_where_found() -> None:
    r = import_manifests("bank", [MANIFESTS / "configmaps.yaml"])
    assert _found(r.descriptor) == {
        ("api", "accounts"): "ConfigMap/api-env ACCOUNTS_URL",  # envFrom, FQDN URL
        ("api", "ledger-db"): "ConfigMap/db-config DATABASE_URL",  # configMapKeyRef, user:pw@host URL
        ("accounts", "accounts-db"): "ConfigMap/accounts-config application.properties:2",  # mounted, jdbc
        ("accounts", "accounts-cache"): "ConfigMap/accounts-config application.properties:3",  # *.host key
    }
    # the tracing endpoints are telemetry; a key of a ConfigMap nobody loads names nothing
    assert set(r.telemetry) == {("api", "jaeger"), ("accounts", "jaeger")}
    assert r.descriptor["telemetry"] == ["jaeger"] and r.unresolved == ()
    assert r.descriptor["entry"] == "api"


def test_marked_edges_keep_the_descriptor_valid(tmp_path: Path) -> None:
    r = import_manifests("bank", [MANIFESTS / "configmaps.yaml"])
    (tmp_path / "app.yaml").write_text(yaml.safe_dump(r.descriptor, sort_keys=False))
    app = load_descriptor(tmp_path / "app.yaml")
    assert ("accounts", "accounts-db") in app.edges
    assert dict(app.found_in)[("api", "accounts")] == "ConfigMap/api-env ACCOUNTS_URL"
    assert app.telemetry == ("jaeger",) and "jaeger" not in app.targets
    assert app.scope("accounts-db") == ("accounts", "accounts-db", "api")


def test_source_references_are_edges_marked_file_line_and_guesses_stay_out() -> None:
    r = import_manifests("trainticket", [MANIFESTS / "train-ticket.yaml"], FIXTURES / "source" / "trainticket")
    found = {k: v for k, v in _found(r.descriptor).items() if v}
    assert found == {
        ("ts-order-service", "ts-user-service"): "ts-order-service/src/main/java/order/service/OrderServiceImpl.java:9",
        ("ts-order-service", "ts-station-service"): "ts-order-service/src/main/resources/application.yml:14",
        ("ts-preserve-service", "ts-order-service"):
            "ts-preserve-service/src/main/java/preserve/service/PreserveServiceImpl.java:5",  # env default in code
        ("ts-travel-service", "ts-preserve-service"):
            "ts-travel-service/src/main/java/travel/service/TravelServiceImpl.java:8",  # @Value default
        ("ts-travel-service", "ts-route-service"): "ts-travel-service/src/main/resources/application.properties:3",
        ("ts-ui-dashboard", "ts-travel-service"): "ts-ui-dashboard/nginx.conf:4",
    }
    edges = set(_found(r.descriptor))
    # written in the manifest env: stays a plain edge (jdbc default in application.yml says the same)
    assert _found(r.descriptor)[("ts-order-service", "tsdb-mysql")] is None
    assert ("ts-travel-service", "ts-station-service") not in edges  # a name built at run time
    assert ("ts-preserve-service", "ts-auth-service") not in edges  # tests are not dependencies
    assert ("ts-user-service", "ts-auth-service") not in edges  # a file outside every service folder
    unresolved = dict(r.unresolved)
    assert "ts-order-service" not in unresolved and "ts-travel-service" not in unresolved
    assert "nacos" in unresolved["ts-station-service"]  # its own peers are still not visible


def test_placeholders_and_free_text() -> None:
    assert with_defaults("jdbc:mysql://${MYSQL_HOST:tsdb-mysql}:${P:3306}/ts") == "jdbc:mysql://tsdb-mysql:3306/ts"
    assert with_defaults("${ADDR:-cart:7070}") == "cart:7070"
    refs = list(text_references("svc", 'a = "u:pw@db:5432"\nurl: http://[::1]:80/x\nhost: cache\n', "f.yml"))
    assert [(x.name, x.value, x.found_in) for x in refs] == [
        ("a", "u:pw@db:5432", "f.yml:1"), ("url", "http://[::1]:80/x", "f.yml:2"), ("host", "cache", "f.yml:3")]


def test_flag_service_and_collector_are_listed_and_never_candidates(ws: Workspace, cli) -> None:
    proc = cli("apps", "import", "--name", "astronomy", str(MANIFESTS / "otel-demo-rendered.yaml"), check=0)
    assert "fault control (left alone): flagd" in proc.stdout
    assert "telemetry (observer): otel-collector" in proc.stdout
    assert "load generator (client): load-generator" in proc.stdout
    app = load_app(ws, "astronomy")
    assert app.fault_controls == ("flagd",) and app.load == ("load-generator",)
    found = candidates(ws, "astronomy")
    targets = {c.data.get("target", {}).get("service") for c in found if c.status != "refused"}
    assert targets and not targets & {"flagd", "otel-collector", "load-generator"}
    assert not any("flagd" in str(c.data.get("change", {}).get("new", "")) for c in found)
    assert all("flagd" not in c.data.get("scope", []) for c in found if "scope" in c.data)


def test_text_output_lists_unresolved_and_external(ws: Workspace, cli, tmp_path: Path) -> None:
    text = (MANIFESTS / "boutique.yaml").read_text()
    extra = tmp_path / "ext.yaml"
    extra.write_text(text.replace('value: "emailservice:5000"', 'value: "mail.example.com:25"', 1))
    proc = cli("apps", "import", "--name", "ext", str(extra), check=0)
    out = json.loads(cli("apps", "import", "--name", "ext2", str(extra), "--json", check=0).stdout)
    for item in out["external"]:
        assert f"external: {item['service']} -> {item['address']}" in proc.stdout
    assert out["external"], "the fixture names an address outside the manifests"
    trains = cli("apps", "import", "--name", "trains", str(MANIFESTS / "train-ticket.yaml"), check=0)
    assert "unresolved: ts-verification-code-service: its manifest names no dependency" in trains.stdout


def test_upstream_import_records_digests_and_verify_checks_a_copy(ws: Workspace, cli, tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    shutil.copy(MANIFESTS / "boutique.yaml", upstream / "kubernetes-manifests.yaml")
    cli("apps", "import", "--name", "boutique", str(upstream / "kubernetes-manifests.yaml"),
        "--upstream", "example/shop@v0.10.1", "--upstream-path", "release", check=0)
    app = load_app(ws, "boutique")
    assert app.upstream is not None and app.upstream.version == "v0.10.1" and app.upstream.path == "release"
    assert not (ws.apps_dir / "boutique" / "manifests").exists()  # upstream files are not copied
    ok = cli("apps", "verify", "boutique", "--manifests", str(upstream), check=0)
    assert "is example/shop at v0.10.1" in ok.stdout
    (upstream / "kubernetes-manifests.yaml").write_text(
        (upstream / "kubernetes-manifests.yaml").read_text().replace("v0.10.1", "v0.10.2"))
    bad = cli("apps", "verify", "boutique", "--manifests", str(upstream), check=1)
    assert "different kubernetes-manifests.yaml" in bad.stdout
    assert "not example/shop at v0.10.1" in bad.stderr and "Traceback" not in bad.stderr
    (upstream / "kubernetes-manifests.yaml").unlink()
    assert "missing" in cli("apps", "verify", "boutique", "--manifests", str(upstream), check=1).stdout
    assert "records no upstream" in cli("apps", "verify", "minishop", "--manifests", str(upstream), check=1).stderr


def test_authoring_refuses_faults_at_telemetry_and_fault_controls(ws: Workspace, cli) -> None:
    cli("apps", "import", "--name", "astronomy", str(MANIFESTS / "otel-demo-rendered.yaml"), check=0)
    flag = cli("author", "direct", "--app", "astronomy", "--service", "flagd", "--action", "instance-failure", check=1)
    assert "built-in fault controls" in flag.stderr and "Traceback" not in flag.stderr
    col = cli("author", "direct", "--app", "astronomy", "--service", "otel-collector", "--action", "instance-failure",
              check=1)
    assert "must not blind the observer" in col.stderr
    cli("author", "direct", "--app", "astronomy", "--service", "cart", "--action", "instance-failure", "--dry-run",
        check=0)


def test_import_option_errors_are_one_line(ws: Workspace, cli) -> None:
    src = str(MANIFESTS / "boutique.yaml")
    bad_site = cli("apps", "import", "--name", "b1", src, "--site", "a:zone-a:primary", check=2)
    assert "expected NAME:ZONE:ROLE" in bad_site.stderr and "Traceback" not in bad_site.stderr
    bad_up = cli("apps", "import", "--name", "b2", src, "--upstream", "no-version", check=2)
    assert "expected REPOSITORY@VERSION" in bad_up.stderr
    cli("apps", "import", "--name", "b3", src, "--site", "a:zone-a:active", "--site", "b:zone-b:standby", check=0)
    assert [s.role for s in load_app(ws, "b3").sites] == ["active", "standby"]


def _bank_source(root: Path) -> Path:
    """api's code reads DATABASE_URL but never ACCOUNTS_URL, which its ConfigMap also offers."""
    (root / "api").mkdir(parents=True)
    (root / "api" / "go.mod").write_text("module bank/api\n")
    (root / "api" / "main.go").write_text('package main\n\nimport "os"\n\nvar dsn = os.Getenv("DATABASE_URL")\n')
    (root / "api" / "db.go").write_text('package main\n\nconst fallback = "postgres://ledger-db:5432/ledger"\n')
    return root


def test_a_configmap_address_the_source_never_reads_is_not_an_edge(tmp_path: Path) -> None:
    source = _bank_source(tmp_path / "src")
    r = import_manifests("bank", [MANIFESTS / "configmaps.yaml"], source)
    found = _found(r.descriptor)
    assert ("api", "accounts") not in found  # ACCOUNTS_URL: in api-env, named by no file of api
    assert found[("api", "ledger-db")] == "ConfigMap/db-config DATABASE_URL"  # os.Getenv("DATABASE_URL")
    # accounts has no folder in the source: nothing is known against its ConfigMap, so it keeps it all
    assert found[("accounts", "accounts-db")] == "ConfigMap/accounts-config application.properties:2"
    assert ("api", "ConfigMap/api-env ACCOUNTS_URL") in r.unread
    assert dict((s, (n, m)) for s, n, m in r.source_files)["api"] == (2, 1)  # main.go, db.go; db.go names ledger-db
    without = _found(import_manifests("bank", [MANIFESTS / "configmaps.yaml"]).descriptor)
    assert without[("api", "accounts")] == "ConfigMap/api-env ACCOUNTS_URL"  # no --source: as before


def test_a_key_read_as_spring_binds_it_and_a_mounted_file_named_in_code_count(tmp_path: Path) -> None:
    source = _bank_source(tmp_path / "src")
    (source / "api" / "Config.java").write_text('@Value("${accounts.url}") String accounts;\n')
    (source / "accounts").mkdir()
    (source / "accounts" / "Main.java").write_text("class Main {}\n")
    text = (MANIFESTS / "configmaps.yaml").read_text().replace("application.properties", "bank.properties")
    manifest = tmp_path / "bank.yaml"
    manifest.write_text(text)
    found = _found(import_manifests("bank", [manifest], source).descriptor)
    assert found[("api", "accounts")] == "ConfigMap/api-env ACCOUNTS_URL"  # accounts.url is ACCOUNTS_URL
    assert ("accounts", "accounts-db") not in found  # bank.properties is mounted, and no file of accounts names it
    (source / "accounts" / "Main.java").write_text('class Main { String f = "/config/bank.properties"; }\n')
    found = _found(import_manifests("bank", [manifest], source).descriptor)
    assert found[("accounts", "accounts-db")] == "ConfigMap/accounts-config bank.properties:2"


def test_source_prints_files_read_and_matched_per_service(ws: Workspace, cli, tmp_path: Path) -> None:
    source = _bank_source(tmp_path / "src")
    args = ("apps", "import", "--name", "bank", str(MANIFESTS / "configmaps.yaml"), "--source", str(source))
    out = cli(*args, "--dry-run", check=0).stderr.splitlines()
    assert "source: api: read 2 files, 1 naming another service" in out
    assert "source: accounts: no file read (no folder named after it, its workload or an alias)" in out
    assert "not read: api: ConfigMap/api-env ACCOUNTS_URL (its source never names it; no edge)" in out
    data = json.loads(cli(*args, "--json", check=0).stdout)
    assert {"service": "api", "read": 2, "matched": 1} in data["source"]
    assert len(data["source"]) == len(data["descriptor"]["services"])
    assert data["unread"] == [{"service": "api", "configmap": "ConfigMap/api-env ACCOUNTS_URL"}]


def test_service_folders_grouped_deeper_and_a_tag_pinned_by_digest(tmp_path: Path) -> None:
    """Bank of Anthos' layout: src/<team>/<service>, and images pinned as `:v0.6.8@sha256:...`."""
    source = tmp_path / "src"
    (source / "ledger" / "api").mkdir(parents=True)  # api grouped under its team's folder
    (source / "ledger" / "api" / "pom.xml").write_text("<project/>\n")
    (source / "ledger" / "api" / "Db.java").write_text('String url = System.getenv("DATABASE_URL");\n')
    (source / "node_modules" / "accounts").mkdir(parents=True)  # a skipped tree is never a service's folder
    (source / "node_modules" / "accounts" / "package.json").write_text("{}\n")
    (source / "accounts").mkdir()
    (source / "accounts" / "requirements.txt").write_text("flask\n")
    (source / "accounts" / "api").mkdir()  # deeper than accounts' own folder: the shallowest one wins
    digest = "@sha256:" + "0" * 64
    manifest = tmp_path / "bank.yaml"
    manifest.write_text((MANIFESTS / "configmaps.yaml").read_text().replace(":1.4.0", ":1.4.0" + digest))
    assert digest in manifest.read_text()
    d = import_manifests("bank", [manifest], source).descriptor
    where = {s["name"]: (s["source"], s["language"]) for s in d["services"] if "source" in s}
    assert where == {"api": ("ledger/api", "java"), "accounts": ("accounts", "python")}
    assert d["version"] == import_manifests("bank", [MANIFESTS / "configmaps.yaml"]).descriptor["version"] == "1.4.0"
