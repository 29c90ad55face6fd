"""The v1 integer-slice codec picker (Go pickI64Codec / pickU64Codec, qdf-wire-v1.md §3.1).

Candidates are tried in the fixed order raw < FOR < Delta+FOR < RLE < Dict < PFOR with
the exact byte costs of the reference; a candidate replaces the running best only if it
is *strictly* smaller, so ties keep the earlier codec and the output matches Go's choice
byte for byte. PFOR's cost is the reference's conservative upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidOptionError
from ..format.varint import uvarint_len, zigzag
from .stats import MASK64, IntStats, as_signed

FOR_MAX_BITS = 56  # qpackForMaxBits: the packer's 64-bit accumulator bound
DICT_MAX_DISTINCT = 64
CODECS = ("raw", "for", "delta", "rle", "dict", "pfor")


@dataclass(frozen=True)
class Plan:
    """A chosen codec, its exact (PFOR: upper-bound) payload size and its bit width."""

    codec: str
    cost: int
    bits: int = 0


def raw_cost(n: int, width: int = 8) -> int:
    return 2 + uvarint_len(n) + width * n


def dict_bits(d: int) -> int:
    """Index width for a d-entry dictionary: 0 for one entry, else bits.Len(d-1)."""
    return 0 if d <= 1 else (d - 1).bit_length()


def _for_cost(s: IntStats) -> int | None:
    fb = s.for_bits
    if fb > FOR_MAX_BITS:
        return None
    return 3 + uvarint_len(s.wire_value(s.mn)) + uvarint_len(s.n) + (s.n * fb + 7) // 8


def _delta_cost(s: IntStats) -> int | None:
    db = s.delta_bits
    if s.n < 4 or db > FOR_MAX_BITS:
        return None
    first = s.wire_value(int(s.u[0]))
    hdr = 3 + uvarint_len(first) + uvarint_len(zigzag(as_signed(s.min_delta))) + uvarint_len(s.n)
    return hdr + ((s.n - 1) * db + 7) // 8


def _rle_cost(s: IntStats) -> int | None:
    if s.n < 8 or s.probe_runs * 2 > min(32, s.n):
        return None
    return 2 + uvarint_len(s.n) + s.rle_body_size()


def _dict_cost(s: IntStats) -> int | None:
    if s.n < 8:
        return None
    count, table = s.distinct()
    if count <= 0:
        return None
    body = sum(uvarint_len(s.wire_value(int(v))) for v in table)
    return 2 + uvarint_len(count) + body + uvarint_len(s.n) + (s.n * dict_bits(count) + 7) // 8


def pfor_plan(s: IntStats) -> tuple[int, int] | None:
    """Go pforPlan*: the width b minimising the conservative PFOR cost, and that cost."""
    fb = s.for_bits
    if s.n < 8 or fb < 2 or fb > FOR_MAX_BITS:
        return None
    hist = s.bitlen_hist()
    val_len = uvarint_len((s.mx - s.mn) & MASK64)  # upper bound per exception value
    gap_len = uvarint_len(s.n)  # an index gap never exceeds n
    hdr = pfor_header_cost(s)
    best: tuple[int, int] | None = None
    suffix = 0
    for cand in range(fb - 1, -1, -1):
        suffix += int(hist[cand + 1])
        c = hdr + (s.n * cand + 7) // 8 + uvarint_len(suffix) + suffix * (gap_len + val_len)
        if best is None or c < best[1]:
            best = (cand, c)
    return best


def pfor_header_cost(s: IntStats) -> int:
    return 3 + uvarint_len(s.n) + uvarint_len(s.wire_value(s.mn))


def pick(s: IntStats) -> Plan:
    """Run the v1 picker over non-empty stats; returns the winning :class:`Plan`."""
    best = Plan("raw", raw_cost(s.n))
    c = _for_cost(s)
    if c is not None and c < best.cost:
        best = Plan("for", c, s.for_bits)
    c = _delta_cost(s)
    if c is not None and c < best.cost:
        best = Plan("delta", c, s.delta_bits)
    c = _rle_cost(s)
    if c is not None and c < best.cost:
        best = Plan("rle", c)
    c = _dict_cost(s)
    if c is not None and c < best.cost:
        best = Plan("dict", c, dict_bits(s.distinct()[0]))
    # Go skips the PFOR histogram once only width 0 could still win (it never does then).
    if best.cost <= pfor_header_cost(s) + s.n // 8:
        return best
    p = pfor_plan(s)
    if p is not None and p[1] < best.cost:
        best = Plan("pfor", p[1], p[0])
    return best


def forced(s: IntStats, codec: str) -> Plan:
    """The plan for ``codec`` if its picker gate allows it, else InvalidOptionError."""
    c: int | None
    if codec == "raw":
        return Plan("raw", raw_cost(s.n))
    if codec == "for":
        c, bits = _for_cost(s), s.for_bits
    elif codec == "delta":
        c, bits = _delta_cost(s), s.delta_bits
    elif codec == "rle":
        c, bits = _rle_cost(s), 0
    elif codec == "dict":
        c = _dict_cost(s)
        bits = dict_bits(s.distinct()[0]) if c is not None else 0
    elif codec == "pfor":
        p = pfor_plan(s)
        c, bits = (p[1], p[0]) if p is not None else (None, 0)
    else:
        raise InvalidOptionError(f"unknown integer codec {codec!r}; expected one of {CODECS}")
    if c is None:
        raise InvalidOptionError(f"codec {codec!r} is not applicable to this column (its picker gate fails)")
    return Plan(codec, c, bits)
