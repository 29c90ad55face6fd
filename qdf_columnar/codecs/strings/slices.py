"""A scanned string column body: where each row's bytes are, without copying them yet.

Every string unit's ``read`` returns a :class:`StringSlices`;
:mod:`qdf_columnar.wire.strcol_arrow` turns one into an Arrow array (all rows or the
rows a filter kept). It lives with the units, below the wire layer, because the units
build it.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import alpha as ak
from qdf_kernels import strings as sk

from ...columns import alloc
from ...errors import CorruptDataError
from ..ints.unit import IntPayload
from .bits import unpack_bits


def _nibble_lut(alphabet: np.ndarray, a: int) -> np.ndarray:
    """uint32[256]: byte -> its two characters as a little-endian uint16 (0xFFFFFFFF if invalid)."""
    v = np.arange(256)
    lo, hi = v & 15, v >> 4
    padded = np.zeros(16, dtype=np.uint32)
    padded[:a] = alphabet[:a]
    lut = padded[lo] | (padded[hi] << 8)
    lut[(lo >= a) | (hi >= a)] = 0xFFFFFFFF
    return lut.astype(np.uint32)


class StringSlices:
    """A scanned string column: where each row's bytes are, without copying them yet.

    Four shapes: per-row (start, length) pairs into ``src`` (raw slabs); dictionary
    codes into a table of (start, length) pairs (codes may still be bit-packed, so a
    filtered read unpacks only the rows it keeps); an alpha-packed body (``alpha``)
    whose characters are unpacked on demand; or an FSST block (``fsst``) decoded on
    demand, whole or only the rows a filter kept.
    """

    __slots__ = ("src", "starts", "lens", "_codes", "table_starts", "table_lens", "offsets", "ascii",
                 "packed", "n", "alpha", "payload", "fsst")

    def __init__(self, src, starts, lens, codes=None, table_starts=None, table_lens=None, offsets=None) -> None:
        self.src = src
        self.starts = starts
        self.lens = lens
        self._codes = codes
        self.table_starts = table_starts
        self.table_lens = table_lens
        self.offsets = offsets  # set when src holds the rows back to back (no gather needed)
        self.ascii = False  # set when every byte is known to be ASCII (no UTF-8 check needed)
        self.packed: tuple[np.ndarray, int] | None = None  # (body, bits) of still-packed codes
        self.n = len(codes) if codes is not None else (len(starts) if starts is not None else 0)
        self.alpha: tuple[np.ndarray, np.ndarray, int, int] | None = None  # body, alphabet, a, cbits
        #: (QPack integer payload of the codes, its offset, its column) while not decoded
        self.payload: tuple[IntPayload, int, str | None] | None = None
        #: an F6 block not decoded yet (:class:`...fsst.FsstBody`)
        self.fsst = None

    def __len__(self) -> int:
        return self.n

    @property
    def is_dict(self) -> bool:
        return self.table_lens is not None

    @property
    def codes(self) -> np.ndarray:
        if self._codes is None:
            if self.payload is not None:
                payload, at, column = self.payload
                self._codes = self._checked(payload.values(), at, column)
            else:
                body, bits = self.packed
                self._codes = unpack_bits(body, self.n, bits)
                self._check_codes(self._codes)
        return self._codes

    def codes_at(self, rows: np.ndarray) -> np.ndarray:
        """Codes of the selected rows only (unpacked straight from the bits or runs when possible)."""
        if self._codes is None and self.payload is not None:
            payload, at, column = self.payload
            return self._checked(payload.take(rows), at, column)
        if self._codes is not None or self.packed is None:
            return self.codes[rows]
        body, bits = self.packed
        out = np.empty(len(rows), dtype=np.uint64)
        sk.unpack_codes_at(body, np.int64(bits), np.ascontiguousarray(rows, dtype=np.int64), out)
        self._check_codes(out)
        return out

    def code_runs(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(the code of each run, the row each run ends before) while the codes are a
        QPack payload kept as runs (see :meth:`IntPayload.runs`), else None."""
        if self._codes is not None or self.payload is None:
            return None
        payload, at, column = self.payload
        runs = payload.runs()
        if runs is None:
            return None
        return self._checked(runs[0], at, column), runs[1]

    def _checked(self, codes: np.ndarray, at: int, column: str | None) -> np.ndarray:
        """QPack-coded codes as uint64, each checked to be a dictionary entry."""
        d = len(self.table_lens)
        if len(codes) and ((codes.dtype == np.int64 and int(codes.min()) < 0) or int(codes.max()) >= d):
            raise CorruptDataError(f"dictionary index out of range for {d} entries", column=column, offset=at)
        return codes.astype(np.uint64, copy=False)

    def _check_codes(self, codes: np.ndarray) -> None:
        d = len(self.table_lens)
        if len(codes) and int(codes.max()) >= d:
            raise CorruptDataError(f"dictionary index {int(codes.max())} is out of range for {d} entries")

    def unpack_fsst(self) -> None:
        """Decode an F6 block into a contiguous slab (once)."""
        self.offsets, self.src = self.fsst.decode()
        self.fsst = None

    def unpack_alpha(self) -> None:
        """Materialise an alpha-packed body into a contiguous slab (once)."""
        body, alphabet, a, cbits = self.alpha
        total = int(self.offsets[-1])
        slab = alloc.empty(total, np.uint8)
        if cbits == 4 and total >= 2:
            status = ak.alpha_unpack_nibbles_into(body, _nibble_lut(alphabet, a), slab[: total & ~1].view(np.uint16))
            if status >= 0 and total & 1:
                status = ak.alpha_unpack_into(body[total >> 1 :], alphabet, np.int64(a), np.int64(4), slab[-1:])
        else:
            status = ak.alpha_unpack_into(body, alphabet, np.int64(a), np.int64(cbits), slab)
        if status < 0:
            raise CorruptDataError("alpha code outside the alphabet")
        self.src = slab
        self.alpha = None

