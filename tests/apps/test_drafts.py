"""Candidate drafts: written outside catalog/, accepted by lint as drafts, never in a release."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from faultkit.workspace import Workspace


def test_drafts_lint_as_drafts_and_stay_out_of_releases(ws: Workspace, cli) -> None:
    out = cli("author", "candidates", "--app", "minishop", "--drafts", check=0).stdout
    drafts = sorted((ws.root / "drafts" / "minishop").glob("*.yaml"))
    assert len(drafts) > 50 and f"wrote {len(drafts)}" in out
    assert not list((ws.root / "catalog" / "minishop").glob("*.yaml"))  # nothing entered the catalog
    again = cli("author", "candidates", "--app", "minishop", "--drafts", check=0).stdout
    assert "wrote 0" in again and "drafts/minishop/" in again  # never overwritten

    plain = cli("catalog", "lint", "drafts", check=1)
    assert "still a placeholder" in plain.stdout
    report = json.loads(cli("catalog", "lint", "--drafts", "--json", check=0).stdout)
    assert report["files"] == len(drafts) and report["errors"] == 0
    kinds = {f["severity"] for f in report["findings"]}
    assert kinds == {"draft"}
    assert {f["path"] for f in report["findings"]} <= {"effect", "log.message"}

    broken = drafts[0]
    data = yaml.safe_load(broken.read_text())
    data["category"] = "nonsense"
    broken.write_text(yaml.safe_dump(data, sort_keys=False))
    bad = cli("catalog", "lint", "--drafts", str(broken), check=1)
    assert "category" in bad.stdout  # a real problem is still an error

    cli("catalog", "build", "--version", "9.9.9", check=0)
    release = json.loads(next(Path(ws.root / "dist").glob("*.json")).read_text())
    ids = json.dumps(release)
    assert not any(d.stem in ids for d in drafts)
