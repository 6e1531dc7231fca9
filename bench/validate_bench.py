"""Wall time of `validate` per fault against its floor: the observation windows it must wait for.

Brings minishop up on the local platform (private state), or with `--platform kubernetes` on the
cluster KUBECONFIG names (in a namespace of its own; `--load CMD` hands the images to its nodes),
validates one fault of each mechanism with the given window, and prints wall / floor, the time of
the stages before the first window (a code fault's patch, image build with the service's own lint
and unit tests, marker search and baseline), the ratio of the rest (the cycles) to the floor, the
time of each rollout the run made (a code fault's build, a config fault's setting; inject and
revert), faultkit's own CPU time for the validation (every thread of this process: what the
validator adds to the load of the machine it measures), the time for up and down, and the load
average. Target: at most 1.10 with 20-second windows.
Usage: python bench/validate_bench.py [--window 20] [--repeat 2] [--platform P] [--load CMD] [FAULT_ID ...]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from faultkit.catalog.lint import lint
from faultkit.observe.load import MAX_LOAD_PER_CORE, Limits
from faultkit.platforms.base import Platform
from faultkit.platforms.kubernetes import KubernetesPlatform
from faultkit.platforms.local import LocalPlatform
from faultkit.validators.pipeline import ValidationParams, validate
from faultkit.workspace import Workspace

DEFAULT = ["minishop-checkout-env-payment-addr-port", "minishop-cartstore-instance-failure"]


def windows(mechanism: str, repeat: int) -> int:
    """Before, after and recovery per cycle; config faults add one uncounted cycle."""
    cycles = repeat + (1 if mechanism == "config" else 0)
    return 3 * cycles


def timed(platform: Platform, names: tuple[str, ...]) -> dict[str, list[float]]:
    """Time every call of the platform's change methods (seconds per call, by method)."""
    spent: dict[str, list[float]] = {name: [] for name in names}
    for name in names:
        method: Callable[..., Any] = getattr(platform, name)

        @functools.wraps(method)
        def wrapper(*a: Any, _method: Callable[..., Any] = method, _name: str = name, **kw: Any) -> Any:
            start = time.monotonic()
            try:
                return _method(*a, **kw)
            finally:
                spent[_name].append(time.monotonic() - start)
        setattr(platform, name, wrapper)
    return spent


def static_stages_s(bundle: Path, started: float) -> float:
    """Seconds from the start of validate to the end of its last stage before the cycles (baseline)."""
    stages = json.loads((bundle / "stages.json").read_text())["stages"]
    return max((s["at"] for s in stages), default=started) - started


def spread(values: list[float]) -> str:
    return f"{len(values)} x {min(values):.1f}-{max(values):.1f} s (mean {sum(values) / len(values):.1f})" \
        if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("faults", nargs="*")
    parser.add_argument("--window", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--platform", choices=("local", "kubernetes"), default="local")
    parser.add_argument("--max-load", type=float, default=MAX_LOAD_PER_CORE,
                        help="load per core above which a cycle is an overloaded error (raise it on a shared machine)")
    parser.add_argument("--load", default=None, help="kubernetes: command that puts an image into the cluster")
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    entries = {e.id: e for e in lint(Workspace(root, root / ".faultkit")).entries}
    faults = args.faults or DEFAULT + sorted(i for i, e in entries.items() if e.mechanism == "code")[:1]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(root, Path(tmp) / "state")
        platform: Platform
        if args.platform == "kubernetes":
            platform = KubernetesPlatform(ws, namespace=f"bench-{uuid.uuid4().hex[:6]}", loader=args.load)
        else:
            platform = LocalPlatform(ws, environ={**os.environ, "FAULTKIT_STATE_DIR": str(ws.state_dir)})
        started = time.monotonic()
        platform.up("minishop", timeout=300)
        print(f"up: {time.monotonic() - started:.1f} s")
        spent = timed(platform, ("rollout", "patch_field"))
        try:
            print(f"{'fault':50} {'mech':7} {'verdict':9} {'wall s':>7} {'floor s':>7} {'ratio':>6} "
                  f"{'stages s':>8} {'cycles':>6} {'cpu s':>6}  rollouts")
            for fault in faults:
                direct = entries[fault].direct
                if direct and direct.action not in platform.actions():
                    print(f"{fault:50} {'direct':7} not run: the {args.platform} platform does not carry out "
                          f"{direct.action} yet")
                    continue
                params = ValidationParams(window_s=args.window, interval_s=2.0, repeat=args.repeat,
                                          limits=Limits(max_load_per_core=args.max_load))
                for values in spent.values():
                    values.clear()
                start, started, cpu = time.monotonic(), time.time(), time.process_time()
                verdict, bundle = validate(ws, platform, fault, params, evidence=Path(tmp) / "evidence", record=False)
                wall, cpu = time.monotonic() - start, time.process_time() - cpu
                static = static_stages_s(bundle, started)
                floor = windows(entries[fault].mechanism, args.repeat) * args.window
                changes = spent["rollout"] + spent["patch_field"]
                print(f"{fault:50} {entries[fault].mechanism:7} {verdict['status']:9} {wall:7.1f} {floor:7.1f} "
                      f"{wall / floor:6.2f} {static:8.1f} {(wall - static) / floor:6.2f} {cpu:6.1f}  {spread(changes)}")
        finally:
            started = time.monotonic()
            platform.down()
            print(f"down: {time.monotonic() - started:.1f} s")
            print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
