"""Kubernetes resource quantities ("256Mi", "500m", "1e3", "500k"), one grammar for lint, import and
every platform.

The grammar is Kubernetes' own (k8s.io/apimachinery resource.Quantity): a non-negative decimal
number followed by a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal suffix (n u m "" k M G T P E) or a
decimal exponent (e3, E-2). Suffixes are case-sensitive: `m` is milli, `M` is mega, and `K` is not a
suffix at all. Values are exact (Decimal), so "0.1" CPU is 100 millicores, not 99.99...

How a value is used follows the kubelet: memory is a whole number of bytes, rounded up (`100m`
memory is 0.1 byte, which Kubernetes rounds up to 1 byte); CPU is whole millicores, rounded up.
`memory_problem` and `cpu_problem` say why a limit, though valid, cannot be what its author meant.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

from faultkit.errors import InputError

_GRAMMAR = re.compile(
    r"^\+?(?P<number>\d+(?:\.\d*)?|\.\d+)"
    r"(?P<suffix>[eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$"
)
_FACTORS: dict[str, Decimal] = {
    "": Decimal(1),
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"),
    "T": Decimal("1e12"), "P": Decimal("1e15"), "E": Decimal("1e18"),
    **{s: Decimal(1024) ** (i + 1) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
}
EXAMPLES = "e.g. 256Mi, 1Gi, 500M, 500k, 250m, 0.5, 1e3"

# Below this no container runtime starts a process reliably (docker refuses limits under 6 MiB);
# a smaller memory limit is a unit mistake (`100m` is 0.1 byte, `512` is 512 bytes), not a fault.
MEMORY_FLOOR = 6 * 1024 * 1024


class QuantityError(InputError):
    """Text that is not a Kubernetes quantity."""


def parse(text: object) -> Decimal:
    """The quantity's exact value in base units (bytes, cores)."""
    s = str(text).strip()
    m = _GRAMMAR.match(s)
    if not m:
        hint = " (K is not a suffix: write k for 1000 or Ki for 1024)" if re.search(r"\dK$", s) else ""
        raise QuantityError(f"{s!r} is not a Kubernetes quantity{hint}; {EXAMPLES}")
    suffix = m["suffix"] or ""
    try:
        number = Decimal(m["number"])
        if suffix[:1] in ("e", "E") and len(suffix) > 1:
            return number.scaleb(int(suffix[1:]))
        return number * _FACTORS[suffix]
    except (InvalidOperation, OverflowError):
        raise QuantityError(f"{s!r} is out of range for a Kubernetes quantity") from None


def is_quantity(text: object) -> bool:
    try:
        parse(text)
    except QuantityError:
        return False
    return True


def _unset(text: object) -> bool:
    return text is None or text == ""


def memory_bytes(text: object) -> int | None:
    """A memory quantity in whole bytes, rounded up as Kubernetes does; None when unset."""
    return None if _unset(text) else math.ceil(parse(text))


def cpu_millis(text: object) -> int | None:
    """A CPU quantity in whole millicores, rounded up (at least 1 for any non-zero value); None when unset."""
    return None if _unset(text) else math.ceil(parse(text) * 1000)


def memory_problem(text: object) -> str | None:
    """Why `text` cannot be a memory limit anyone meant, or None."""
    value = parse(text)
    if value < MEMORY_FLOOR:
        shown = f"{value.normalize():f}"
        hint = " ('m' is milli, not mega: write Mi or M)" if str(text).strip().endswith("m") else ""
        return (f"memory limit {str(text).strip()!r} is {shown} bytes{hint}; "
                f"a memory limit below {MEMORY_FLOOR // 2**20}Mi cannot run a process")
    return None


def cpu_problem(text: object) -> str | None:
    """Why `text` cannot be a CPU limit, or None: Kubernetes refuses precision finer than 1m."""
    value = parse(text)
    if value <= 0:
        return f"cpu limit {str(text).strip()!r} is zero; a process needs some CPU"
    if value * 1000 != (value * 1000).to_integral_value():
        return f"cpu limit {str(text).strip()!r} is finer than 1m, the smallest CPU unit Kubernetes accepts"
    return None


def format_bytes(n: int) -> str:
    """Bytes as the largest binary suffix that divides them exactly: 268435456 -> 256Mi."""
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        factor = int(_FACTORS[suffix])
        if n >= factor and n % factor == 0:
            return f"{n // factor}{suffix}"
    return str(n)
