"""Column statistics the v1 QPack integer picker needs (pickI64Codec / pickU64Codec inputs).

One kernel pass gives min, max, delta min/max and the run probe; the exact RLE size,
the <= 64-distinct dictionary probe and the PFOR bit-length histogram are computed
lazily, only when the picker's gates ask for them. Values arrive as a uint64 view;
``signed`` says whether the bit patterns are int64 (kind 0x07) or uint64 (kind 0x03).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from qdf_kernels import intcodecs

from ..format.varint import zigzag

MASK64 = (1 << 64) - 1
_SIGN = 1 << 63


def as_signed(u: int) -> int:
    """Reinterpret a uint64 bit pattern as int64."""
    return u - (1 << 64) if u & _SIGN else u


def bit_len(x: int) -> int:
    """Go bits.Len64: 0 for 0, else the position of the highest set bit."""
    return int(x).bit_length()


@dataclass
class IntStats:
    """Picker statistics for ``u`` (uint64 view, n >= 1)."""

    u: np.ndarray
    signed: bool
    n: int
    mn: int  # bit pattern (uint64)
    mx: int
    min_delta: int  # bit pattern of the int64 minimum delta
    max_delta: int
    probe_runs: int
    _dict: tuple[int, np.ndarray] | None = field(default=None, repr=False)
    _hist: np.ndarray | None = field(default=None, repr=False)

    @property
    def for_bits(self) -> int:
        return bit_len((self.mx - self.mn) & MASK64)

    @property
    def delta_bits(self) -> int:
        return bit_len((self.max_delta - self.min_delta) & MASK64)

    def wire_value(self, v: int) -> int:
        """A value as written in a header uvarint: zigzag for signed kinds."""
        return zigzag(as_signed(v)) if self.signed else v

    def rle_body_size(self) -> int:
        return int(intcodecs.rle_size(self.u, self.signed))

    def distinct(self) -> tuple[int, np.ndarray]:
        """(count, table) of first-occurrence distinct values; count -1 above 64."""
        if self._dict is None:
            table = np.zeros(64, dtype=np.uint64)
            count = int(dict_probe(self.u, table, None))
            self._dict = (count, table[: max(count, 0)])
        return self._dict

    def bitlen_hist(self) -> np.ndarray:
        """Counts of bits.Len64(v - min) (PFOR planning and its exception count)."""
        if self._hist is None:
            self._hist = np.zeros(65, dtype=np.int64)
            intcodecs.bitlen_hist(self.u, np.uint64(self.mn), self._hist)
        return self._hist


def dict_probe(u: np.ndarray, table: np.ndarray, idx_out: np.ndarray | None) -> int:
    """Run the 128-slot distinct probe; fill ``idx_out`` with indices when given."""
    slots = np.zeros(128, dtype=np.uint64)
    used = np.zeros(128, dtype=np.uint8)
    hidx = np.zeros(128, dtype=np.int64)
    if idx_out is None:
        idx_out = np.empty(0, dtype=np.uint64)
    return int(intcodecs.dict_probe(u, slots, used, hidx, table, idx_out))


def compute_stats(u: np.ndarray, signed: bool) -> IntStats:
    """One-pass statistics of a non-empty uint64 view (int64 bit patterns when ``signed``)."""
    out = np.empty(5, dtype=np.uint64)
    intcodecs.int_stats(u, np.uint64(_SIGN if signed else 0), out)
    mn, mx, dmn, dmx, runs = (int(x) for x in out)
    return IntStats(u, signed, int(u.shape[0]), mn, mx, dmn, dmx, runs)
