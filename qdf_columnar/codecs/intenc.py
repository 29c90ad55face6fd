"""Writers of the v1 QPack integer payloads: E4 PackRaw, E5 PackFor, E6 PackDeltaFor,
EB PackRLE, ED PackDict, EE PackPFor and F0 PackBlock, plus the whole-column driver.

The driver mirrors Go's writeQPackInt64/Uint64 and encodeSliceInt32/Uint32: pick on the
64-bit widening, fall back to native 4-byte raw for <= 32-bit input when that is not
larger, emit raw for empty-body codecs above 2**24 rows (the decoder's cap), and for long
wide 64-bit columns emit-and-measure the per-block form (F0, 256-row blocks).
"""

from __future__ import annotations

import struct

import numpy as np
from qdf_kernels import bitpack, intcodecs

from ..errors import InvalidOptionError, UnsupportedTypeError
from ..format.tags import ColKind, Kind, QPackTag
from ..format.varint import write_uvarint, zigzag
from . import picker
from .picker import Plan
from .stats import IntStats, as_signed, bit_len, compute_stats, dict_probe

MAX_ROWS = 1 << 24  # qpackMaxStandaloneCount: cap for payloads whose body does not bound n
BLOCK_LOG = 8  # blkLogSmall: the encoder always writes 256-row blocks
BLOCK_MIN_ROWS = 512
_BLOCK_WIDE_BITS = 12
_LE = np.dtype("<u8")
_U32 = struct.Struct("<I")


def _kind(signed: bool) -> int:
    return int(Kind.I64 if signed else Kind.U64)


def _body(size: int) -> np.ndarray:
    return np.zeros(max(size, 0), dtype=np.uint8)


def emit_raw64(out: bytearray, s: IntStats) -> None:
    out += bytes((QPackTag.RAW, _kind(s.signed)))
    write_uvarint(out, s.n)
    out += s.u.astype(_LE, copy=False).tobytes()


def emit_native32(out: bytearray, values: np.ndarray, signed: bool) -> None:
    """E4 with kind 0x06/0x02: the never-larger floor for <= 32-bit input."""
    out += bytes((QPackTag.RAW, Kind.I32 if signed else Kind.U32))
    write_uvarint(out, int(values.shape[0]))
    out += values.astype("<i4" if signed else "<u4").tobytes()


def emit_for(out: bytearray, s: IntStats, bits: int) -> None:
    out += bytes((QPackTag.FOR, _kind(s.signed), bits))
    write_uvarint(out, s.wire_value(s.mn))
    write_uvarint(out, s.n)
    if bits:
        buf = _body((s.n * bits + 7) // 8)
        k = bitpack.pack_for(s.u, np.uint64(s.mn), bits, buf)
        out += buf[:k].tobytes()


def emit_delta(out: bytearray, s: IntStats, bits: int) -> None:
    out += bytes((QPackTag.DELTA_FOR, _kind(s.signed), bits))
    write_uvarint(out, s.wire_value(int(s.u[0])) if s.n else 0)
    write_uvarint(out, zigzag(as_signed(s.min_delta)))
    write_uvarint(out, s.n)
    if bits and s.n >= 2:
        buf = _body(((s.n - 1) * bits + 7) // 8)
        k = bitpack.pack_delta(s.u, np.uint64(s.min_delta), bits, buf)
        out += buf[:k].tobytes()


def emit_rle(out: bytearray, s: IntStats) -> None:
    out += bytes((QPackTag.RLE, _kind(s.signed)))
    write_uvarint(out, s.n)
    buf = _body(s.rle_body_size())
    k = intcodecs.rle_encode(s.u, s.signed, buf)
    out += buf[:k].tobytes()


def emit_dict(out: bytearray, s: IntStats) -> None:
    table = np.zeros(64, dtype=np.uint64)
    idx = np.empty(s.n, dtype=np.uint64)
    d = dict_probe(s.u, table, idx)
    if d <= 0:
        raise InvalidOptionError("dict codec needs 1..64 distinct values")
    out += bytes((QPackTag.DICT, _kind(s.signed)))
    write_uvarint(out, d)
    for v in table[:d]:
        write_uvarint(out, s.wire_value(int(v)))
    write_uvarint(out, s.n)
    bits = picker.dict_bits(d)
    if bits:
        buf = _body((s.n * bits + 7) // 8)
        k = bitpack.pack_for(idx, np.uint64(0), bits, buf)
        out += buf[:k].tobytes()


def emit_pfor(out: bytearray, s: IntStats, b: int) -> None:
    out += bytes((QPackTag.PFOR, _kind(s.signed)))
    write_uvarint(out, s.n)
    out.append(b)
    write_uvarint(out, s.wire_value(s.mn))
    base = np.uint64(s.mn)
    if b:
        buf = _body((s.n * b + 7) // 8)
        k = bitpack.pack_for(s.u, base, b, buf)
        out += buf[:k].tobytes()
    exc_n = int(s.bitlen_hist()[b + 1 :].sum())  # deltas wider than b (b == 0: every nonzero)
    write_uvarint(out, exc_n)
    if exc_n:
        buf = _body(20 * exc_n)
        k = intcodecs.pfor_write_exceptions(s.u, base, b, buf)
        out += buf[:k].tobytes()


def emit_plan(out: bytearray, s: IntStats, plan: Plan) -> None:
    c = plan.codec
    if c == "for":
        emit_for(out, s, plan.bits)
    elif c == "delta":
        emit_delta(out, s, plan.bits)
    elif c == "rle":
        emit_rle(out, s)
    elif c == "dict":
        emit_dict(out, s)
    elif c == "pfor":
        emit_pfor(out, s, plan.bits)
    else:
        emit_raw64(out, s)


def over_cap(s: IntStats, plan: Plan) -> bool:
    """Go qpackConstantOverCap: an empty-body codec above MAX_ROWS would be rejected on decode."""
    if s.n <= MAX_ROWS:
        return False
    if plan.codec in ("for", "delta", "pfor"):
        return plan.bits == 0
    return plan.codec in ("rle", "dict")


# ------------------------------------------------------------------- F0 PackBlock
def _sampled_windows(v: np.ndarray) -> list[np.ndarray]:
    """The first 64 rows of about 8 evenly spaced 256-row blocks (Go's block-regime sample)."""
    n = int(v.shape[0])
    blk = 1 << BLOCK_LOG
    nb = (n + blk - 1) // blk
    return [v[b * blk : min(b * blk + 64, n)] for b in range(0, nb, max(nb // 8, 1))]


def _width(w: np.ndarray) -> int:
    return bit_len((int(w.max()) - int(w.min())) & ((1 << 64) - 1))


def _regime_likely(u: np.ndarray, signed: bool, whole_for_bits: int) -> bool:
    """Go blockRegimeLikely*: sampled 64-row windows whose FOR widths spread >= 4 bits."""
    if whole_for_bits <= 2:
        return False
    widths = [_width(w) for w in _sampled_windows(u.view(np.int64) if signed else u)]
    return max(widths) - min(widths) >= 4


def _local_deltas_likely(u: np.ndarray, whole_delta_bits: int) -> bool:
    """Whether sampled 64-row windows step by much less than the whole column does: runs
    of slowly moving values with a few big jumps between them (sorted stretches that
    restart, per-group counters, dictionary codes of sorted keys), where each block's
    own Delta+FOR is narrow though the column's is not. Not a Go heuristic: the
    CASCADE presets only."""
    # A heuristic only: wrapped differences of huge uints just widen it.
    windows = _sampled_windows(u.view(np.int64))
    widest = max((_width(np.diff(w)) for w in windows if len(w) > 1), default=0)
    return widest + 4 <= whole_delta_bits


def emit_block(out: bytearray, u: np.ndarray, signed: bool) -> None:
    """F0: kind (ColKind INT/UINT, the block container's int/uint byte), blkLog, n, u32 offsets, blocks."""
    n = int(u.shape[0])
    blk = 1 << BLOCK_LOG
    nblocks = (n + blk - 1) // blk
    out += bytes((QPackTag.BLOCK, ColKind.INT if signed else ColKind.UINT, BLOCK_LOG))
    write_uvarint(out, n)
    table_at = len(out)
    out += bytes(4 * nblocks)
    body_start = len(out)
    for b in range(nblocks):
        _U32.pack_into(out, table_at + 4 * b, len(out) - body_start)
        sub = u[b * blk : (b + 1) * blk]
        s = compute_stats(sub, signed)
        emit_plan(out, s, picker.pick(s))


def _emit_whole(out: bytearray, s: IntStats, plan: Plan) -> None:
    """Go emitQPack*: the picked codec, or raw when its empty body would exceed the decode cap."""
    if over_cap(s, plan):
        emit_raw64(out, s)
    else:
        emit_plan(out, s, plan)


def _encode64(out: bytearray, s: IntStats, plan: Plan, block: bool = True, local: bool = False) -> None:
    if (
        block
        and s.n >= BLOCK_MIN_ROWS
        and (s.for_bits >= _BLOCK_WIDE_BITS or s.delta_bits >= _BLOCK_WIDE_BITS)
        and (_regime_likely(s.u, s.signed, s.for_bits)
             or (local and _local_deltas_likely(s.u, s.delta_bits)))
    ):
        # Emit both and keep the smaller: PFOR's cost is only an upper bound, so a
        # predicted-cost comparison could pick a larger form (Go tryWriteBlock*).
        whole = bytearray()
        _emit_whole(whole, s, plan)
        per_block = bytearray()
        emit_block(per_block, s.u, s.signed)
        out += per_block if len(per_block) < len(whole) else whole
        return
    _emit_whole(out, s, plan)


def encode_int_array(out: bytearray, values: np.ndarray, *, force: str | None = None, block: bool = True,
                     local: bool = False) -> None:
    """Append one QPack integer payload for ``values`` chosen by the v1 picker.

    Parameters
    ----------
    out : bytearray
        Destination; the tag and payload are appended.
    values : numpy.ndarray
        1-D array of any integer dtype. Signed dtypes use the int family (kind 0x07, or
        0x06 native raw), unsigned the uint family (0x03 / 0x02).
    force : {None, "raw", "for", "delta", "rle", "dict", "pfor", "block"}
        Force one codec (tests, explain); InvalidOptionError if its gate fails.
    block : bool, default True
        Whether the picker may try the per-block form (F0). Pass False under the
        whole-body entropy pass (Options.RANS): Go's tryWriteBlock* skips it there
        (the u32 offset table and repeated sub-headers entropy-code worse).
    local : bool, default False
        Also try the per-block form when sampled windows step much less than the whole
        column (:func:`_local_deltas_likely`; Options.CASCADE, not the reference).

    Raises
    ------
    UnsupportedTypeError
        ``values`` is not a 1-D integer array.
    InvalidOptionError
        Unknown ``force`` or its gate fails.

    Examples
    --------
    >>> buf = bytearray(); encode_int_array(buf, np.arange(1000, 1010)); buf.hex()
    'e60700d00f020a'
    """
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise UnsupportedTypeError(f"expected a 1-D integer array, got {arr.dtype} with {arr.ndim} dims")
    signed = arr.dtype.kind == "i"
    narrow = arr.dtype.itemsize <= 4
    wide = np.ascontiguousarray(arr, dtype=np.int64 if signed else np.uint64)
    if not wide.flags.writeable:  # kernels are compiled for writable inputs only
        wide = wide.copy()
    u = wide.view(np.uint64)
    n = int(u.shape[0])
    if n == 0:
        # Go emits E4 07/03 00 for every empty int slice (pick returns raw before costing).
        if force not in (None, "raw"):
            raise InvalidOptionError(f"codec {force!r} is not applicable to an empty column")
        out += bytes((QPackTag.RAW, _kind(signed), 0))
        return
    s = compute_stats(u, signed)
    if force == "block":
        if n < BLOCK_MIN_ROWS:
            raise InvalidOptionError(f"block codec needs at least {BLOCK_MIN_ROWS} rows")
        emit_block(out, u, signed)
        return
    if force is not None:
        emit_plan(out, s, picker.forced(s, force))
        return
    plan = picker.pick(s)
    if narrow:
        if plan.cost >= picker.raw_cost(n, 4) or over_cap(s, plan):
            emit_native32(out, arr, signed)
        else:
            emit_plan(out, s, plan)
        return
    _encode64(out, s, plan, block, local)
