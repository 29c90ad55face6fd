"""The whole-column driver of the v1 integer payloads (Go writeQPackInt64/Uint64 and
encodeSliceInt32/Uint32), over the codec units of :mod:`.registry`.

Pick on the 64-bit widening, fall back to native 4-byte raw for <= 32-bit input when
that is not larger, emit raw for empty-body codecs above 2**24 rows (the decoder's
cap), and for long wide 64-bit columns emit-and-measure the per-block form (F0,
256-row blocks).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidOptionError, UnsupportedTypeError
from ..format.tags import QPackTag
from . import picker
from .entropy import order0_bytes
from .ints import raw
from .ints.blocks import BLOCK, BLOCK_LOG
from .ints.unit import FOR_MAX_BITS, MAX_ROWS, Plan, kind64
from .registry import INT_BY_NAME
from .stats import IntStats, bit_len, compute_stats

BLOCK_MIN_ROWS = 512
_BLOCK_WIDE_BITS = 12


class _PickEach:
    """The child encoder of a container: each inner payload picked on its own values."""

    def encode(self, out: bytearray, u: np.ndarray, signed: bool) -> None:
        s = compute_stats(u, signed)
        emit_plan(out, s, picker.pick(s))


_CHILD = _PickEach()


def emit_plan(out: bytearray, s: IntStats, plan: Plan) -> None:
    """Append the payload of ``plan`` (a plan the picker gave for ``s``)."""
    INT_BY_NAME[plan.codec].encode(out, s, plan, _CHILD)


def over_cap(s: IntStats, plan: Plan) -> bool:
    """Go qpackConstantOverCap: an empty-body codec above MAX_ROWS would be rejected on decode."""
    return s.n > MAX_ROWS and INT_BY_NAME[plan.codec].capped(plan)


def emit_block(out: bytearray, s: IntStats) -> None:
    """F0 PackBlock of the column of ``s``: 256-row blocks, each picked on its own."""
    BLOCK.encode(out, s, Plan(BLOCK.name, 0), _CHILD)


# ------------------------------------------- when the per-block form (F0) is tried
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


def _emit_whole(out: bytearray, s: IntStats, plan: Plan) -> None:
    """Go emitQPack*: the picked codec, or raw when its empty body would exceed the decode cap."""
    if over_cap(s, plan):
        raw.RAW.encode(out, s, Plan(raw.RAW.name, raw.cost(s.n)), _CHILD)
    else:
        emit_plan(out, s, plan)


# ------------------------------------------- whole-byte widths (Options.ALIGNED)
def byte_width(bits: int) -> int:
    """``bits`` rounded up to whole bytes (0 stays 0: a constant has no body)."""
    return -(-bits // 8) * 8


def aligned_plan(s: IntStats) -> Plan | None:
    """FOR or Delta+FOR at a whole-byte width, whichever body has the lower order-0 byte
    entropy (what a byte-wise stage after it is left to code), or None when neither
    applies. Values in whole bytes let zstd find repeats that span values and let the
    order-0 tANS pass code each value's bytes by their frequency, where a bit-packed body
    at the exact width looks like noise to both."""
    best: tuple[float, Plan] | None = None
    for codec, bits in ((INT_BY_NAME["for"], s.for_bits), (INT_BY_NAME["delta"], s.delta_bits)):
        if bits > FOR_MAX_BITS:
            continue
        plan = codec.estimate(s, None)
        if plan is None:
            continue
        plan = Plan(plan.codec, plan.cost + (s.n * (byte_width(bits) - bits) + 7) // 8, byte_width(bits))
        body = bytearray()
        codec.encode(body, s, plan, _CHILD)
        score = order0_bytes(np.frombuffer(body, dtype=np.uint8))
        if best is None or score < best[0]:
            best = (score, plan)
    return None if best is None else best[1]


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
        emit_block(per_block, s)
        out += per_block if len(per_block) < len(whole) else whole
        return
    _emit_whole(out, s, plan)


def encode_int_array(out: bytearray, values: np.ndarray, *, force: str | None = None, block: bool = True,
                     local: bool = False, aligned: bool = False) -> None:
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
    aligned : bool, default False
        Write FOR or Delta+FOR at a whole-byte width (:func:`aligned_plan`) for a
        byte-wise stage after the payload (Options.ALIGNED, not the reference); the
        picker's choice when neither applies.

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
        out += bytes((QPackTag.RAW, kind64(signed), 0))
        return
    s = compute_stats(u, signed)
    if force == "block":
        if n < BLOCK_MIN_ROWS:
            raise InvalidOptionError(f"block codec needs at least {BLOCK_MIN_ROWS} rows")
        emit_block(out, s)
        return
    if force is not None:
        emit_plan(out, s, picker.forced(s, force))
        return
    if aligned:
        plan = aligned_plan(s)
        if plan is not None:
            _emit_whole(out, s, plan)
            return
    plan = picker.pick(s)
    if narrow:
        if plan.cost >= raw.cost(n, 4) or over_cap(s, plan):
            raw.emit_native32(out, arr, signed)
        else:
            emit_plan(out, s, plan)
        return
    _encode64(out, s, plan, block, local)
