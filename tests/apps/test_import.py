"""`faultkit apps import` on minishop's own manifests and on demo-shaped fixtures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from faultkit.apps.descriptor import load_app, load_descriptor
from faultkit.apps.importer import import_manifests, resolve
from faultkit.apps.manifests import load_manifests
from faultkit.workspace import Workspace

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "manifests"


def _edges(d: dict) -> set[tuple[str, str]]:
    return {tuple(e) for e in d["edges"]}


def test_minishop_manifests_reproduce_its_descriptor(ws: Workspace) -> None:
    app = load_app(ws, "minishop")
    got = import_manifests("minishop", sorted(app.manifests_dir.glob("*.yaml"))).descriptor
    assert _edges(got) == set(app.edges)
    assert ("loadgenerator", "frontend") in _edges(got)
    assert got["entry"] == app.entry
    want = {(s.name, s.workload_kind, s.workload, s.containers, tuple((p.name, p.port) for p in s.ports))
            for s in app.services}
    assert {(s["name"], s["workload"]["kind"], s["workload"]["name"], tuple(s["containers"]),
             tuple((p["name"], p["port"]) for p in s["ports"])) for s in got["services"]} == want


def test_cli_import_writes_a_valid_descriptor_and_copies_manifests(ws: Workspace, cli) -> None:
    src = FIXTURES / "boutique.yaml"
    proc = cli("apps", "import", "--name", "boutique", str(src), "--json", check=0)
    out = json.loads(proc.stdout)
    assert out["unresolved"] == []
    app = load_app(ws, "boutique")  # schema-checked, references checked
    assert (app.manifests_dir / "boutique.yaml").read_bytes() == src.read_bytes()
    assert app.entry == "frontend"
    again = cli("apps", "import", "--name", "boutique", str(src))
    assert again.returncode == 1 and "already exists" in again.stderr


def test_boutique_edges_entry_and_aliases() -> None:
    r = import_manifests("boutique", [FIXTURES / "boutique.yaml"])
    d = r.descriptor
    names = [s["name"] for s in d["services"]]
    assert len(names) == 12 and "loadgenerator" in names and "default-shop" not in names  # ServiceAccount ignored
    frontend_calls = {"productcatalogservice", "currencyservice", "cartservice", "recommendationservice",
                      "shippingservice", "checkoutservice", "adservice"}
    checkout_calls = {"productcatalogservice", "shippingservice", "paymentservice", "emailservice",
                      "currencyservice", "cartservice"}
    assert _edges(d) == ({("frontend", b) for b in frontend_calls} | {("checkoutservice", b) for b in checkout_calls}
                         | {("recommendationservice", "productcatalogservice"), ("cartservice", "redis-cart"),
                            ("loadgenerator", "frontend")})
    assert d["entry"] == "frontend"  # the LoadBalancer Service selects it
    frontend = next(s for s in d["services"] if s["name"] == "frontend")
    assert "frontend-external" in frontend["aliases"] and frontend["ports"] == [{"name": "http", "port": 80}]
    assert r.unresolved == () and d["version"] == "v0.10.1"


def test_helm_rendered_otel_demo() -> None:
    r = import_manifests("astronomy", [FIXTURES / "otel-demo-rendered.yaml"])
    d = r.descriptor
    by_name = {s["name"]: s for s in d["services"]}
    # Services matched to workloads by selector, named as callers address them
    assert by_name["cart"]["workload"] == {"kind": "Deployment", "name": "otel-demo-cart"}
    assert by_name["kafka"]["workload"]["kind"] == "StatefulSet"
    assert "accounting" in by_name  # no Service: named by its component label
    edges = _edges(d)
    assert {("frontend", "cart"), ("cart", "valkey-cart"), ("frontend-proxy", "frontend"),
            ("checkout", "kafka"), ("accounting", "kafka"), ("load-generator", "frontend-proxy")} <= edges
    assert ("shipping", "quote") in edges  # http://$(QUOTE_HOST):8080
    assert {("checkout", "product-catalog"), ("checkout", "shipping")} <= edges  # FQDN and svc.ns forms
    # the exporter endpoint http://$(OTEL_COLLECTOR_NAME):4317 is telemetry, not a request path
    assert ("frontend", "otel-collector") in r.telemetry
    assert not any(b == "otel-collector" for _, b in edges)
    assert d["entry"] == "frontend-proxy" and d["version"] == "2.0.2"
    # the collector observes and flagd is the demo's own fault control: listed, not unresolved
    assert r.unresolved == ()
    assert d["telemetry"] == ["otel-collector"] and d["fault_controls"] == ["flagd"]
    assert d["load"] == ["load-generator"]
    assert ("cart", "flagd") in r.controls and not any("flagd" in e for e in edges)


def test_registry_based_services_are_unresolved_not_guessed() -> None:
    r = import_manifests("trainticket", [FIXTURES / "train-ticket.yaml"])
    d = r.descriptor
    unresolved = dict(r.unresolved)
    ts = [s["name"] for s in d["services"] if s["name"].startswith("ts-")]
    assert set(unresolved) == set(ts)
    assert "nacos" in unresolved["ts-order-service"]
    assert "not visible" in unresolved["ts-verification-code-service"]
    assert not any(a.startswith("ts-") and b.startswith("ts-") for a, b in _edges(d))  # nothing guessed
    assert ("ts-order-service", "tsdb-mysql") in _edges(d)  # MYSQL_HOST names a Service
    assert d["entry"] == "ts-ui-dashboard"


def test_dry_run_prints_yaml_and_writes_nothing(ws: Workspace, cli) -> None:
    proc = cli("apps", "import", "--name", "trains", str(FIXTURES / "train-ticket.yaml"), "--dry-run", check=0)
    text = proc.stdout
    assert "# unresolved: ts-order-service" in text
    assert yaml.safe_load(text)["name"] == "trains"
    assert not (ws.apps_dir / "trains").exists()


def test_written_descriptor_round_trips(tmp_path: Path) -> None:
    r = import_manifests("astronomy", [FIXTURES / "otel-demo-rendered.yaml"])
    (tmp_path / "manifests").mkdir()
    (tmp_path / "app.yaml").write_text(yaml.safe_dump(r.descriptor, sort_keys=False))
    app = load_descriptor(tmp_path / "app.yaml")
    assert set(app.edges) == _edges(r.descriptor)


def test_resolve_fqdn_forms() -> None:
    names = {"cart", "redis-cart"}
    assert resolve("cart", names) == "cart"
    assert resolve("cart.shop", names) == "cart"
    assert resolve("cart.shop.svc", names) == "cart"
    assert resolve("redis-cart.shop.svc.cluster.local", names) == "redis-cart"
    assert resolve("cart.example.com", names) is None
    assert resolve("payments", names) is None


def test_versions_of_one_service_import_as_one_service(ws: Workspace, cli) -> None:
    """Istio's bookinfo: reviews-v1, -v2, -v3 behind one Service are one service with three versions."""
    d = import_manifests("bookinfo", [FIXTURES / "bookinfo.yaml"]).descriptor
    assert [s["name"] for s in d["services"]] == ["details", "ratings", "reviews", "productpage"]
    reviews = next(s for s in d["services"] if s["name"] == "reviews")
    assert reviews["workload"] == {"kind": "Deployment", "name": "reviews-v1"}
    assert reviews["versions"] == [{"version": v, "workload": {"kind": "Deployment", "name": f"reviews-{v}"}}
                                   for v in ("v1", "v2", "v3")]
    assert {"reviews-v2", "reviews-v3"} <= set(reviews["aliases"])
    assert _edges(d) == {("productpage", "details"), ("productpage", "reviews"), ("productpage", "ratings"),
                         ("reviews", "ratings")}
    cli("apps", "import", "--name", "bookinfo", str(FIXTURES / "bookinfo.yaml"), check=0)
    app = load_app(ws, "bookinfo")
    assert app.service("reviews").workloads == ("reviews-v1", "reviews-v2", "reviews-v3")


def test_a_descriptor_with_two_services_of_one_name_is_refused(ws: Workspace, cli) -> None:
    cli("apps", "import", "--name", "bookinfo", str(FIXTURES / "bookinfo.yaml"), check=0)
    path = ws.apps_dir / "bookinfo" / "app.yaml"
    data = yaml.safe_load(path.read_text())
    reviews = next(s for s in data["services"] if s["name"] == "reviews")
    for v in reviews.pop("versions")[1:]:  # what the import wrote before versions: one service per workload
        data["services"].append({**reviews, "workload": v["workload"]})
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    err = cli("apps", "show", "bookinfo", check=1).stderr.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert "services[4]: 'reviews' is already services[2]; several workloads of one service are its `versions`" in err


def test_a_folder_of_manifests_is_read_recursively_in_path_order(ws: Workspace, cli, tmp_path: Path) -> None:
    """Bookinfo split over a folder: one file per service, a subfolder, JSON, and files that are not manifests."""
    docs = list(yaml.safe_load_all((FIXTURES / "bookinfo.yaml").read_text()))
    folder = tmp_path / "bookinfo"
    (folder / "reviews").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / "details.yaml").write_text(yaml.safe_dump_all(docs[0:2]))
    (folder / "ratings.yml").write_text(yaml.safe_dump_all(docs[2:4]))
    (folder / "reviews" / "service.json").write_text(json.dumps(docs[4]))
    (folder / "reviews" / "deployments.yaml").write_text(yaml.safe_dump_all(docs[5:8]))
    (folder / "productpage.yaml").write_text(yaml.safe_dump_all(docs[8:]))
    (folder / "README.md").write_text("not a manifest")
    (folder / ".git" / "config.yaml").write_text(yaml.safe_dump(docs[0]))  # hidden: never read
    out = json.loads(cli("apps", "import", "--name", "bookinfo", str(folder), "--json", check=0).stdout)
    d = out["descriptor"]
    assert [s["name"] for s in d["services"]] == ["details", "productpage", "ratings", "reviews"]  # file order
    assert len(next(s for s in d["services"] if s["name"] == "reviews")["versions"]) == 3
    copied = ws.apps_dir / "bookinfo" / "manifests"
    assert sorted(p.name for p in copied.iterdir()) == [
        "deployments.yaml", "details.yaml", "productpage.yaml", "ratings.yml", "service.json.yaml"]
    app = load_app(ws, "bookinfo")  # the copies are what the app reads from now on
    assert set(app.edges) == _edges(d)
    assert {doc.name for doc in load_manifests(app.manifests_dir) if doc.kind == "Service"} == {
        "details", "ratings", "reviews", "productpage"}


def test_folder_problems_are_one_line(ws: Workspace, cli, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "docs").mkdir(parents=True)
    (empty / "docs" / "notes.txt").write_text("nothing")
    err = cli("apps", "import", "--name", "e", str(empty), check=1).stderr.strip()
    assert err.count("\n") == 0 and "no *.yaml, *.yml or *.json file in this folder" in err and str(empty) in err
    twice = tmp_path / "twice"
    for sub in ("base", "overlay"):
        (twice / sub).mkdir(parents=True)
        shutil.copy(FIXTURES / "bookinfo.yaml", twice / sub / "all.yaml")
    # word for word the same objects: one of each, as `kubectl apply` takes them
    out = json.loads(cli("apps", "import", "--name", "t", str(twice), "--json", "--dry-run").stdout)
    assert sorted(s["name"] for s in out["descriptor"]["services"]) == ["details", "productpage", "ratings", "reviews"]
    # an overlay that differs would be two deployments of one object: refused, with both places
    overlay = twice / "overlay" / "all.yaml"
    overlay.write_text(overlay.read_text().replace("port: 9080", "port: 9081", 1))
    err = cli("apps", "import", "--name", "t", str(twice), check=1).stderr.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert f"{overlay}:" in err and "is also at" in err and "differently" in err
    assert not (ws.apps_dir / "t").exists()
    same_name = tmp_path / "same"
    for sub, part in (("a", 0), ("b", 2)):
        (same_name / sub).mkdir(parents=True)
        text = yaml.safe_dump_all(list(yaml.safe_load_all((FIXTURES / "bookinfo.yaml").read_text()))[part:part + 2])
        (same_name / sub / "app.yaml").write_text(text)
    err = cli("apps", "import", "--name", "s", str(same_name), check=1).stderr.strip()
    assert err.count("\n") == 0 and "both would be manifests/app.yaml; rename one of them" in err
