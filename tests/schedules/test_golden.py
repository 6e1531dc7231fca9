"""Pinned bytes: a change here means old seeds no longer reproduce their schedules.

If the change is intended, bump ALGORITHM["version"] in faultkit/schedules/document.py and
regenerate with FAULTKIT_UPDATE_GOLDEN=1 pytest tests/schedules/test_golden.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from faultkit.schedules import document, synthetic
from faultkit.schedules.params import preset
from faultkit.schedules.sources import Source
from tests.schedules.entries import shop_entries

GOLDEN = Path(__file__).parent.parent / "golden" / "schedules"
CASES = [("shop", "main", 1), ("rail", "main", 20250101), ("shop", "light-10", 2),
         ("rail", "light-5", 3)]


def source() -> Source:
    release = synthetic.release("1.0.0", shop_entries())
    return Source(release["version"], release["digest"], tuple(release["entries"]), "golden")


@pytest.mark.parametrize("app, name, seed", CASES)
def test_schedule_bytes_are_pinned(app: str, name: str, seed: int, tmp_path: Path):
    out = tmp_path / "s.json"
    doc = document.build(source(), app, preset(name), seed)
    assert document.problems(doc) == []
    document.write(doc, out)
    golden = GOLDEN / f"{app}-{name}-seed{seed}.json"
    if os.environ.get("FAULTKIT_UPDATE_GOLDEN"):
        golden.write_bytes(out.read_bytes())
    assert out.read_bytes() == golden.read_bytes()


def test_two_runs_give_the_same_bytes():
    doc = document.build(source(), "shop", preset("main"), 99)
    assert document.dumps(doc) == document.dumps(document.build(source(), "shop", preset("main"), 99))
    assert document.dumps(doc).endswith("}\n")
    assert document.problems(doc) == []


def test_bytes_do_not_depend_on_hash_seed_or_process(tmp_path: Path):
    import subprocess
    import sys

    script = ("import sys; from tests.schedules.test_golden import source; "
              "from faultkit.schedules import document; from faultkit.schedules.params import preset; "
              "sys.stdout.write(document.dumps(document.build(source(), 'shop', preset('main'), 1)))")
    root = Path(__file__).parent.parent.parent
    for hash_seed in ("0", "12345"):
        out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True,
                             env={**os.environ, "PYTHONHASHSEED": hash_seed}, check=True).stdout
        assert out == (GOLDEN / "shop-main-seed1.json").read_bytes()
