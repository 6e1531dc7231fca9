"""A small, fully specified pseudo-random generator, so a seed means the same schedule forever.

`random.Random` is not used: its algorithms for ints and floats are implementation details that
Python may change between releases. SplitMix64 (Steele, Lea and Flood, "Fast splittable
pseudorandom number generators", OOPSLA 2014) is a few lines of 64-bit integer arithmetic, which
Python computes exactly on every machine. Floats are made from integers by exact division by 2**53.
"""

from __future__ import annotations

import hashlib

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_FLOAT_DENOM = float(1 << 53)


class SplitMix64:
    """SplitMix64: the state advances by a fixed odd constant; each output is a mix of the state."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & _MASK

    def next_u64(self) -> int:
        self.state = (self.state + _GAMMA) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def bits53(self) -> int:
        """A uniform integer in [0, 2**53): the top 53 bits of one output."""
        return self.next_u64() >> 11

    def uniform(self) -> float:
        """A uniform float in [0, 1): a 53-bit integer divided by 2**53, which is exact."""
        return self.bits53() / _FLOAT_DENOM

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection so that no value is favoured."""
        if n <= 0:
            raise ValueError(f"below({n}): n must be positive")
        limit = (1 << 64) - (1 << 64) % n
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n

    def bernoulli(self, numerator: int, denominator: int) -> bool:
        """True with probability numerator/denominator, compared in exact integer arithmetic."""
        return self.bits53() * denominator < numerator * (1 << 53)


def stream(seed: int, purpose: str) -> SplitMix64:
    """An independent generator for one purpose (arrivals, durations, ...) of one seed.

    Separate streams keep, say, the arrival times of a seed the same whatever catalog the faults
    are drawn from. The state comes from SHA-256, so nearby seeds give unrelated streams.
    """
    digest = hashlib.sha256(f"faultkit-schedule:{seed}:{purpose}".encode()).digest()
    return SplitMix64(int.from_bytes(digest[:8], "big"))
