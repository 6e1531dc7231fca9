"""`faultkit author direct`: typed parameters, levels and platforms from vocab.ACTIONS."""

from __future__ import annotations

import json

import yaml

from faultkit.catalog.lint import lint
from faultkit.workspace import Workspace


def _direct(fk, *extra: str):
    return fk("author", "direct", "--app", "minishop", "--service", "cart", *extra)


def test_params_are_typed_and_the_entry_lints_clean(ws: Workspace, fk) -> None:
    r = _direct(fk, "--action", "network-delay", "--param", "ms=750", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    data = out["entry"]
    assert data["direct"] == {"action": "network-delay", "params": {"ms": 750}}  # an int, not "750"
    assert (data["category"], data["level"], data["effect"]) == ("database-network", "pod", "errors")
    assert out["note"] == "network-delay can be carried out by: local, kubernetes"
    path = ws.root / out["path"]
    assert isinstance(yaml.safe_load(path.read_text())["direct"]["params"]["ms"], int)
    assert lint(ws, [path]).errors == 0


def test_defaults_filled_and_level_chosen(ws: Workspace, fk) -> None:
    r = _direct(fk, "--action", "cpu-stress", "--level", "node", "--dry-run")
    assert r.code == 0 and "cpu-stress can be carried out by: local, kubernetes" in r.err
    data = yaml.safe_load(r.out)
    assert data["direct"]["params"] == {"workers": 2} and data["level"] == "node"
    assert data["artifact"]["kind"] == "node" and data["category"] == "infrastructure"


def test_refusals(ws: Workspace, fk) -> None:
    cases = [
        (["--action", "cpu-stress", "--param", "workers=many"], "expected int"),
        (["--action", "cpu-stress", "--param", "workers=0"], "outside 1..64"),
        (["--action", "cpu-stress", "--param", "workers=65"], "outside 1..64"),
        (["--action", "cpu-stress", "--param", "wrokers=2"], "did you mean 'workers'"),
        (["--action", "instance-kill", "--param", "ms=2"], "takes no parameters"),
        (["--action", "cpu-stress", "--param", "workers"], "write it as name=value"),
        (["--action", "instance-kill", "--level", "node"], "acts at pod, service level, not node"),
        (["--action", "cpu-stres"], "did you mean 'cpu-stress'"),
    ]
    for args, why in cases:
        r = _direct(fk, *args)
        assert r.code == 1 and why in r.err, (args, r.err)
    assert not list((ws.catalog_dir / "minishop").iterdir())


def test_same_intervention_twice_is_refused(ws: Workspace, fk) -> None:
    assert _direct(fk, "--action", "instance-kill").code == 0
    r = _direct(fk, "--action", "instance-kill", "--level", "pod")
    assert r.code == 1 and "already makes this intervention" in r.err
