"""The three benchmark applications' descriptors and drafts as shipped (no upstream file needed)."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import yaml

from faultkit.apps.descriptor import load_descriptor
from faultkit.authoring.drafts import lint_drafts
from faultkit.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
APPS = ("boutique", "astronomy", "trainticket")


def test_descriptors_record_their_upstream_and_their_graphs() -> None:
    apps = {a: load_descriptor(REPO / "apps" / a / "app.yaml") for a in APPS}
    for app in apps.values():
        assert app.upstream is not None and app.upstream.commit and app.upstream.files
        assert all(re.fullmatch(r"[0-9a-f]{64}", f.sha256) for f in app.upstream.files)
    boutique, astronomy, trains = apps["boutique"], apps["astronomy"], apps["trainticket"]
    assert (len(boutique.services), len(boutique.edges), boutique.entry) == (12, 16, "frontend")
    assert boutique.upstream and boutique.upstream.version == "v0.10.6"
    assert boutique.service("emailservice").source == "emailservice"
    assert astronomy.fault_controls == ("flagd",) and "otel-collector" in astronomy.telemetry
    assert [(s.name, s.role) for s in astronomy.sites] == [("site-a", "active"), ("site-b", "standby")]
    assert astronomy.entry == "frontend-proxy" and "flagd" not in {n for e in astronomy.edges for n in e}
    assert len(trains.edges) > 100 and len(trains.found_in) == len(trains.edges)
    assert all(re.search(r":\d+$", where) for _, where in trains.found_in)  # file:line
    assert trains.entry == "ts-ui-dashboard"


def test_drafts_target_the_application_only_and_match_the_readme() -> None:
    readme = (REPO / "README.md").read_text()
    for a in APPS:
        app = load_descriptor(REPO / "apps" / a / "app.yaml")
        files = sorted((REPO / "drafts" / a).glob("*.yaml"))
        mechanisms = collections.Counter()
        for f in files:
            d = yaml.safe_load(f.read_text())
            assert d["app"] == a and "validation" not in d  # a draft has not been validated
            assert d["target"]["service"] in app.targets
            mechanisms[d["mechanism"]] += 1
        assert f"| {a} | {len(files)} | {mechanisms['config']} | {mechanisms['direct']} |" in readme


def test_direct_drafts_lint_as_drafts_without_upstream_files(monkeypatch) -> None:
    monkeypatch.setenv("FAULTKIT_ROOT", str(REPO))
    ws = Workspace.find()
    direct = [f for a in APPS for f in sorted((REPO / "drafts" / a).glob("*.yaml"))
              if yaml.safe_load(f.read_text())["mechanism"] == "direct"]
    report = lint_drafts(ws, direct[:120])
    assert report.errors == 0, [f.render() for f in report.findings if f.severity == "error"][:5]
    assert any(f.severity == "draft" for f in report.findings)
