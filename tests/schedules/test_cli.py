from __future__ import annotations

import json
from pathlib import Path

import pytest

from faultkit.schedules import document, synthetic
from tests.helpers.cli import run_cli


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    """The real CLI in the current folder (the `repo` fixture changed into it and set FAULTKIT_ROOT)."""
    proc = run_cli(*argv, cwd=Path.cwd())
    return proc.returncode, proc.stdout, proc.stderr


def test_export_writes_a_schema_valid_schedule_under_schedules(repo: Path, capsys):
    code, out, err = run(capsys, "schedule", "export", "--app", "shop", "--seed", "7")
    assert code == 0, err
    path = repo / "schedules" / "shop-main-seed7.json"
    doc = json.loads(path.read_text())
    assert document.problems(doc) == []
    assert doc["release"]["version"] == "1.0.0" and doc["app"] == "shop" and doc["seed"] == 7
    assert str(repo) not in path.read_text()
    code, out, _ = run(capsys, "schedule", "export", "--app", "shop", "--seed", "7", "--json")
    assert json.loads(out)["stats"] == doc["stats"]


def test_export_uses_the_newest_release_by_version(repo: Path, capsys):
    newer = synthetic.release("1.10.0", synthetic.entries("shop", 11, 40))
    (repo / "dist" / "catalog-1.10.0.json").write_text(json.dumps(newer))
    (repo / "dist" / "catalog-1.9.0.json").write_text("not read")
    code, out, err = run(capsys, "schedule", "export", "--app", "shop", "--seed", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["release"]["version"] == "1.10.0"


def test_export_options_override_the_preset_and_name_the_file(repo: Path, capsys):
    code, out, err = run(capsys, "schedule", "export", "--app", "rail", "--seed", "3",
                         "--preset", "light-10", "--faults", "12", "--ramp", "2", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["params"]["faults"] == 12 and result["params"]["ramp"] == 2.0
    assert Path(result["file"]).name == "rail-light-10-custom-seed3.json"


def test_export_from_the_working_tree(repo: Path, capsys):
    code, _, err = run(capsys, "schedule", "export", "--app", "shop", "--seed", "1", "--catalog")
    assert code == 1 and "catalog/shop/: no such folder" in err
    folder = repo / "catalog" / "shop"
    folder.mkdir(parents=True)
    import yaml

    for data in synthetic.entries("shop", 11, 30):
        (folder / f"{data['id']}.yaml").write_text(yaml.safe_dump(data))
    (folder / "broken.yaml").write_text("id: [")
    out_file = repo / "wt.json"
    code, _, err = run(capsys, "schedule", "export", "--app", "shop", "--seed", "1", "--catalog",
                       "--out", str(out_file))
    assert code == 0, err
    doc = json.loads(out_file.read_text())
    assert doc["release"]["version"] == "working-tree" and doc["stats"]["candidates"] == 30


@pytest.mark.parametrize("argv, code, message", [
    (["--app", "nope", "--seed", "1"], 1, "no entries for app 'nope'; apps here: rail, shop"),
    (["--app", "shop", "--seed", "abc"], 2, "--seed: 'abc' is not an integer"),
    (["--app", "shop", "--seed", "1", "--ramp", "0.9"], 2, "--ramp: 0.9 is below 1"),
    (["--app", "shop", "--seed", "1", "--injection-minutes", "0"], 2, "is not a duration"),
    (["--app", "shop", "--seed", "1", "--observation-minutes", "-2"], 2, "is negative"),
    (["--app", "shop", "--seed", "1", "--catalog", "--release", "x.json"], 2, "both given"),
])
def test_export_bad_input_is_one_clear_line(repo: Path, capsys, argv, code, message):
    got, _, err = run(capsys, "schedule", "export", *argv)
    assert got == code
    assert message in err
    assert err.startswith("Error: ") and err.count("\n") == 1


def test_export_without_a_release(repo: Path, capsys):
    (repo / "dist" / "catalog-1.0.0.json").unlink()
    code, _, err = run(capsys, "schedule", "export", "--app", "shop", "--seed", "1")
    assert code == 1
    assert "no catalog release in dist/; run `faultkit catalog build` first, or pass --release" in err


def test_export_from_an_empty_or_categoryless_release(repo: Path, capsys, tmp_path: Path):
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(synthetic.release("0.1", [])))
    code, _, err = run(capsys, "schedule", "export", "--app", "shop", "--seed", "1",
                       "--release", str(empty))
    assert code == 1 and "the catalog holds no entries" in err
    odd = synthetic.entries("shop", 11, 5)
    for data in odd:
        data["category"] = "weather"
    weird = tmp_path / "weird.json"
    weird.write_text(json.dumps(synthetic.release("0.2", odd)))
    code, _, err = run(capsys, "schedule", "export", "--app", "shop", "--seed", "1",
                       "--release", str(weird))
    assert code == 1 and "has a schedule category (found: weather)" in err


def test_show_reports_counts_mix_concurrency_and_timeline(repo: Path, capsys):
    run(capsys, "schedule", "export", "--app", "shop", "--seed", "7")
    path = repo / "schedules" / "shop-main-seed7.json"
    doc = json.loads(path.read_text())
    code, out, err = run(capsys, "schedule", "show", str(path))
    assert code == 0, err
    assert f"{doc['stats']['injected']} injected" in out
    assert f"peak {doc['stats']['peak_active']}" in out
    assert "code-bug" in out and "target" in out and "timeline" in out
    assert len([line for line in out.splitlines() if " inj " in line or " obs " in line]) == 45
    code, out, _ = run(capsys, "schedule", "show", str(path), "--json")
    summary = json.loads(out)
    assert summary["mean_active"] == pytest.approx(doc["stats"]["mean_active"], abs=1e-3)
    assert summary["peak_active"] == doc["stats"]["peak_active"]


def test_show_png_writes_a_plot(repo: Path, capsys):
    pytest.importorskip("matplotlib")
    run(capsys, "schedule", "export", "--app", "rail", "--seed", "4")
    png = repo / "plot.png"
    code, _, err = run(capsys, "schedule", "show", str(repo / "schedules" / "rail-main-seed4.json"),
                       "--png", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000


def test_show_rejects_a_file_that_is_not_a_schedule(repo: Path, capsys):
    bad = repo / "bad.json"
    bad.write_text(json.dumps({"schema": "faultkit/schedule/v1"}))
    code, _, err = run(capsys, "schedule", "show", str(bad))
    assert code == 1 and "not a valid schedule" in err and err.count("\n") == 1
