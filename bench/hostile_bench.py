"""How fast hostile files are refused: each loader on each bomb, best of five, in milliseconds.

    PYTHONPATH=. python3 bench/hostile_bench.py

The refusals happen before anything is built (yamlio.check_events, jsonio.check_depth), so every
figure should be a few milliseconds whatever the bomb's nominal size.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from faultkit import jsonio
from faultkit.errors import FaultkitError
from faultkit.yamlio import load_located

LAUGHS = 'lol: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"l{i}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))
CASES: dict[str, tuple[str, Callable[[Path], object]]] = {
    "yaml billion laughs (10^9 values)": (LAUGHS, load_located),
    "yaml 100,000 nested brackets": ("x: " + "[" * 100_000 + "]" * 100_000 + "\n", load_located),
    "yaml 5,000-digit integer": ("x: " + "9" * 5000 + "\n", load_located),
    "json 100,000 nested brackets": ("[" * 100_000 + "]" * 100_000, jsonio.load),
    "json NaN": ('{"timeout_s": NaN}', jsonio.load),
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, (text, load) in CASES.items():
            path = Path(tmp) / "case"
            path.write_text(text)
            best = float("inf")
            for _ in range(5):
                start = time.perf_counter()
                try:
                    load(path)
                    outcome = "ACCEPTED"
                except FaultkitError:
                    outcome = "refused"
                best = min(best, time.perf_counter() - start)
            print(f"{name:38} {outcome:8} {best * 1000:8.2f} ms")


if __name__ == "__main__":
    main()
