"""The committed, counter-based random generator (spec: docs/RNG.md).

Every draw is ``HMAC-SHA256(key=seed, msg=LABEL || domain || counter)``, with
``domain`` and ``counter`` as 8-byte big-endian unsigned integers.  The
platform uses the stream version at which a decision is taken as the domain,
so each decision has its own independent sequence and re-deciding a recorded
intent with the revealed seed reproduces its draws exactly.

Integers use the first 8 bytes of a block as an unsigned big-endian number
with rejection sampling (no modulo bias); shuffles are Fisher-Yates from the
last index down.  Anyone can re-implement this in a few lines of any language.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

LABEL = b"quarterdeck-rng-v1"
_TWO64 = 1 << 64

T = TypeVar("T")


def commitment(seed: bytes) -> str:
    """The public commitment to a seed: lowercase hex sha256."""
    return hashlib.sha256(seed).hexdigest()


class Rng:
    """Deterministic draws for one decision.  Not thread-safe; cheap to make."""

    __slots__ = ("_prefix", "_seed", "counter", "domain")

    def __init__(self, seed: bytes, domain: int = 0, counter: int = 0):
        if len(seed) != 32:
            raise ValueError("seed must be 32 bytes")
        self._seed = seed
        self.domain = domain
        self.counter = counter
        self._prefix = LABEL + domain.to_bytes(8, "big")

    def block(self) -> bytes:
        """The next 32-byte block; advances the counter by one."""
        out = hmac.digest(self._seed, self._prefix + self.counter.to_bytes(8, "big"), "sha256")
        self.counter += 1
        return out

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)``, ``1 <= n <= 2**64``."""
        if not 1 <= n <= _TWO64:
            raise ValueError("n out of range")
        limit = _TWO64 - (_TWO64 % n)
        while True:
            x = int.from_bytes(self.block()[:8], "big")
            if x < limit:
                return x % n

    def randint(self, lo: int, hi: int) -> int:
        """A uniform integer in ``[lo, hi]`` (both inclusive)."""
        return lo + self.randbelow(hi - lo + 1)

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.randbelow(len(seq))]

    def shuffled(self, seq: Sequence[T]) -> list[T]:
        """A new list: Fisher-Yates, ``i`` from ``len-1`` down to 1, swapping
        ``i`` with ``randbelow(i + 1)``."""
        out = list(seq)
        for i in range(len(out) - 1, 0, -1):
            j = self.randbelow(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def draw(self, bag: list[T], k: int = 1) -> list[T]:
        """Remove and return ``k`` items drawn without replacement from
        ``bag`` (mutated): each draw takes index ``randbelow(len(bag))`` and
        fills the hole with the last item (swap-remove)."""
        out = []
        for _ in range(min(k, len(bag))):
            i = self.randbelow(len(bag))
            out.append(bag[i])
            bag[i] = bag[-1]
            bag.pop()
        return out
