"""`apps import` never writes a descriptor that `apps show` refuses (issue 32): a workload that
cannot be a service is left out with a one-line reason naming it and its manifest line, and the
import of thousands of services stays linear."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from faultkit.apps.importer import import_manifests

BENCH = Path(__file__).resolve().parent.parent.parent / "bench" / "import_bench.py"


def deployment(name: str | None, port: int = 8080, init_only: bool = False, service: str | None = None
               ) -> list[dict[str, Any]]:
    label = service or name or "nameless"
    pod = {"initContainers" if init_only else "containers": [{"name": "main", "image": "example/x:1.0"}]}
    d: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment",
                         "spec": {"selector": {"matchLabels": {"app": label}},
                                  "template": {"metadata": {"labels": {"app": label}}, "spec": pod}}}
    if name is not None:
        d["metadata"] = {"name": name}
    s = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": service or name or "nameless"},
         "spec": {"selector": {"app": label}, "ports": [{"name": "http", "port": port}]}}
    return [d, s]


GOOD = [*deployment("frontend"), *deployment("cart")]
GOOD[0]["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "CART_ADDR", "value": "cart:8080"}]

# (case, the bad workload's documents, what the reason says)
CASES = [
    ("no-metadata", deployment(None), "Deployment '' (app.yaml:"),
    ("dotdot", deployment("../../etc"), "name '../../etc' is not a Kubernetes object name"),
    ("300-chars", deployment("a" * 300), "is not a Kubernetes object name"),
    ("cyrillic", deployment("c\u0430rt2"), "name 'c\u0430rt2' is not a Kubernetes object name"),
    ("port-70000", deployment("bigport", port=70000), "ports[0].port: 70000 is greater than the maximum of 65535"),
    ("init-only", deployment("initonly", init_only=True), "containers: [] should be non-empty"),
    ("service-300-chars", deployment("okname", service="s" * 300), "name: 'sssss"),
]


@pytest.mark.parametrize("case,docs,needle", CASES, ids=[c[0] for c in CASES])
def test_a_workload_apps_show_would_refuse_is_left_out_with_its_reason(ws, run, tmp_path, case, docs, needle):
    manifest = tmp_path / "app.yaml"
    manifest.write_text(yaml.safe_dump_all(GOOD + docs))
    proc = run("apps", "import", "--name", "shop", str(manifest))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    skipped = [line for line in proc.stdout.splitlines() if line.startswith("skipped: ")]
    assert len(skipped) == 1 and needle in skipped[0] and skipped[0].endswith("left out"), proc.stdout
    show = run("apps", "show", "shop", "--json")
    assert show.returncode == 0, show.stderr
    assert sorted(s["name"] for s in yaml.safe_load(show.stdout)["services"]) == ["cart", "frontend"]


def test_nothing_that_can_be_a_service_is_refused_and_nothing_written(ws, run, tmp_path):
    manifest = tmp_path / "app.yaml"
    manifest.write_text(yaml.safe_dump_all(deployment("../../etc") + deployment("bigport", port=70000)))
    proc = run("apps", "import", "--name", "shop", str(manifest))
    err = proc.stderr.strip()
    assert proc.returncode == 1 and err.count("\n") == 0 and "that can be a service" in err, err
    assert "'../../etc' is not a Kubernetes object name" in err
    assert not (ws.apps_dir / "shop").exists()


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("import_bench", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_three_thousand_services_import_in_seconds(tmp_path):
    """Import grows linearly: 3,000 services cost about ten times 300 (it was quadratic: a hundred
    times, over 120 s). Measured as this process's CPU time, in one run, so a loaded machine (a CI
    run's fast tier shares its cores with builds) moves both figures alike."""
    from faultkit.commands.import_cmds import _descriptor_text

    def imported(n: int) -> tuple[Any, str, float]:
        manifest = tmp_path / f"services-{n}.yaml"
        manifest.write_text(yaml.dump_all(_bench().manifests(n), Dumper=yaml.CSafeDumper))
        start = time.process_time()
        result = import_manifests("bench", [manifest])
        text = _descriptor_text(result)
        return result, text, time.process_time() - start

    _, _, small = imported(300)
    result, text, seconds = imported(3000)
    assert len(result.descriptor["services"]) == 3000 and len(result.descriptor["edges"]) >= 2999
    assert result.descriptor["entry"] == "svc-0"  # the service reaching all others
    assert "svc-2999" in text
    assert seconds < 5, f"{seconds:.1f} s of CPU for 3,000 services (it was quadratic: over 120 s)"
    assert seconds / max(small, 0.01) < 30, f"3,000 services cost {seconds / small:.0f} times 300 ({seconds:.1f} s)"


def test_reach_counts_agree_with_a_search_from_every_service():
    import random

    from faultkit.apps.reach import reach_counts

    rng = random.Random(32)
    for _ in range(300):
        nodes = [f"s{i}" for i in range(rng.randint(1, 12))]
        edges = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randint(0, 24))]
        want = {}
        for start in nodes:
            seen, todo = {start}, [start]
            while todo:
                here = todo.pop()
                for a, b in edges:
                    if a == here and b not in seen:
                        seen.add(b)
                        todo.append(b)
            want[start] = len(seen)
        assert reach_counts(nodes, edges) == want, (nodes, edges)
