"""JSON at the edge, with the same limits as YAML: bundles, schedules and releases come from pull
requests and must not crash, hang or exhaust faultkit.

Python's json refuses nothing by itself: it accepts NaN and Infinity (and `json.dumps` then writes
them back as invalid JSON), integers of any length, and nesting until the C stack gives out.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

from faultkit.errors import InputError
from faultkit.yamlio import MAX_BYTES, MAX_DEPTH, MAX_INT, check_plain, read_text

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


class _Refused(ValueError):
    pass


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a finite number; write a number")


def _int(text: str) -> int:
    if len(text) > 20 or not -MAX_INT <= int(text) <= MAX_INT:
        raise _Refused(f"the integer {text[:20]}... is beyond 64 bits")
    return int(text)


def check_depth(text: str, where: str) -> None:
    """Nesting beyond MAX_DEPTH, found by a scan of the brackets outside strings, before parsing."""
    depth = 0
    for i, d in enumerate(accumulate(1 if c in "[{" else -1 for c in _BRACKETS.findall(_STRING.sub("", text)))):
        if d > MAX_DEPTH:
            depth = i
            break
    if depth:
        raise InputError(f"{where}: refused: nesting deeper than {MAX_DEPTH} levels")


def loads(text: str, where: str) -> Any:
    """Parse JSON text; every problem is an InputError naming `where` and the line."""
    check_depth(text, where)
    try:
        data = json.loads(text, parse_constant=_constant, parse_int=_int)
    except _Refused as e:
        raise InputError(f"{where}: refused: {e}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{where}:{e.lineno}: not valid JSON ({e.msg})") from None
    except (ValueError, RecursionError) as e:
        raise InputError(f"{where}: not valid JSON ({e})") from None
    check_plain(data, where)
    return data


def load(path: Path, max_bytes: int = 16 * MAX_BYTES) -> Any:
    """A JSON file, read under the size and file-type limits of yamlio.read_text."""
    return loads(read_text(path, max_bytes), str(path))


def load_image_map(path: Path) -> dict[str, str]:
    """A file mapping each service to a prebuilt image reference ({"service": "image:tag"})."""
    data = load(path)
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputError(f"{path}: must map each service name to an image reference, as {{\"cart\": \"cart:1\"}}")
    return data
