"""Issue 32: a verdict is bound to what it measured. `catalog build` admits an entry only when every
field of its validation block is what its bundle says, and (for bundles that seal them) when the
descriptor, the target's pinned source, the build commands and the rule settings are the ones the
release is built from. Each attack edits the real files of a workspace and runs the real build."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest
import yaml

from faultkit.apps.descriptor import load_app
from faultkit.catalog.bindings import KINDS, bindings
from faultkit.catalog.model import entry_from_data
from faultkit.validators.inputs import app_snapshot, inputs_record
from faultkit.validators.params import ValidationParams
from tests.factories import port_entry, write_entry
from tests.release.admit import admit
from tests.release.test_stability import validated


def build(cli) -> dict[str, Any]:
    out = json.loads(cli("catalog", "build", "--version", "1", "--json", check=0).stdout)
    return {x["id"]: x for x in out["excluded"]} | {"_entries": out["entries"]}


def edit_block(ws, data: dict[str, Any], **fields: Any) -> None:
    data = json.loads(json.dumps(data))
    for name, value in fields.items():
        if name.startswith("stability_"):
            data["validation"]["stability"][name.removeprefix("stability_")] = value
        else:
            data["validation"][name] = value
    write_entry(ws, data)


@pytest.mark.parametrize(("field", "value"), [("window_s", 300.0), ("repeat", 9), ("platform", "kubernetes"),
                                              ("failed_rules", ["screening"])])
def test_a_validation_block_the_bundle_does_not_back_is_left_out(ws, cli, field, value):
    data = admit(ws, port_entry(1))
    assert build(cli)["_entries"] == 1
    edit_block(ws, data, **{field: value})
    out = build(cli)
    assert out["_entries"] == 0
    assert out["ms-cart-port-1"]["reason"] == "validation-mismatch"
    assert f"{field}: the entry says {value!r}" in out["ms-cart-port-1"]["detail"]


def test_a_stability_block_the_second_bundle_does_not_back_is_left_out(ws, cli):
    data = validated(ws, 1, "admitted")
    assert build(cli)["_entries"] == 1
    edit_block(ws, data, stability_window_s=60.0)
    out = build(cli)["ms-cart-port-1"]
    assert out["reason"] == "validation-mismatch" and "stability: window_s: the entry says 60.0" in out["detail"]


def test_the_validator_seals_every_binding(ws):
    entry = entry_from_data(port_entry(1))
    record = inputs_record(ws, entry, app_snapshot(load_app(ws, "minishop"), entry), ValidationParams(), "local")
    assert record["bindings"] == bindings(ws, entry) and tuple(record["bindings"]) == KINDS
    assert record["bindings"]["source"].startswith("tree:sha256:")


def set_build(ws, lint: list[str], test: list[str]) -> None:
    path = ws.apps_dir / "minishop" / "app.yaml"
    text = path.read_text()
    start, end = text.index("build:\n"), text.index("\n", text.index("  test:")) + 1
    path.write_text(text[:start] + yaml.safe_dump({"build": {"lint": lint, "test": test}}) + text[end:])


def edit_source(ws) -> None:
    main = ws.apps_dir / "minishop" / "src" / "cart" / "main.py"
    main.write_text(main.read_text() + "\n# tuned\n")


def replace_descriptor(ws) -> None:
    """What `apps import --force` does: a new descriptor in place of the one the verdict measured."""
    path = ws.apps_dir / "minishop" / "app.yaml"
    data = yaml.safe_load(path.read_text())
    data["version"] = str(data.get("version", "1")) + "-reimported"
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def no_leakage_words(ws) -> None:
    (ws.root / "faultkit.toml").write_text("[leakage]\nwords = []\n")


@pytest.mark.parametrize(("attack", "reason", "named"), [
    (lambda ws: set_build(ws, ["true"], ["true"]), "stale-descriptor", "descriptor, build"),
    (edit_source, "stale-source", "source"),
    (replace_descriptor, "stale-descriptor", "descriptor"),
    (no_leakage_words, "stale-rules", "rules"),
])
def test_a_bound_verdict_is_left_out_when_what_it_measured_changed(ws, cli, attack, reason, named):
    admit(ws, port_entry(1), bound=True)
    before = json.loads(cli("catalog", "build", "--version", "1", "--json", check=0).stdout)
    release = json.loads((ws.root / before["path"]).read_text())
    assert release["bound"] == {"ms-cart-port-1": list(KINDS)}
    attack(ws)
    out = build(cli)
    assert out["_entries"] == 0 and out["ms-cart-port-1"]["reason"] == reason
    assert f"the {named} changed" in out["ms-cart-port-1"]["detail"]


def test_a_bundle_sealed_before_bindings_is_checked_for_what_it_seals(ws, cli):
    """The shipped bundles: bound to their entry, patch and validation block only; the release says
    so by leaving them out of `bound`, and a descriptor edit does not exclude them (the gate flags it)."""
    admit(ws, port_entry(1))
    admit(ws, port_entry(2), bound=True)
    set_build(ws, ["true"], ["true"])
    out = json.loads(cli("catalog", "build", "--version", "1", "--json", check=0).stdout)
    release = json.loads((ws.root / out["path"]).read_text())
    assert [e["id"] for e in release["entries"]] == ["ms-cart-port-1"] and "bound" not in release
    assert [(x["id"], x["reason"]) for x in release["excluded"]] == [("ms-cart-port-2", "stale-descriptor")]


def test_a_bundle_with_deleted_windows_stops_the_build(ws, cli):
    admit(ws, port_entry(1))
    shutil.rmtree(ws.evidence_dir / "ms-cart-port-1" / "run-1" / "windows")
    proc = cli("catalog", "build", "--version", "1", check=1)
    assert proc.stderr.count("\n") == 1 and "windows/" in proc.stderr and "missing" in proc.stderr


def test_apps_import_force_replacing_the_descriptor_leaves_a_bound_verdict_out(ws, cli):
    admit(ws, port_entry(1), bound=True)
    manifests = sorted(str(p) for p in (ws.apps_dir / "minishop" / "manifests").glob("*.yaml"))
    cli("apps", "import", "--name", "minishop", "--force", *manifests, check=0)
    out = build(cli)
    assert out["_entries"] == 0 and out["ms-cart-port-1"]["reason"] == "stale-descriptor", out["ms-cart-port-1"]
