"""F1 ZoneChunk: a column in 256-row zones with a zone map, so filters skip zones.

Layout (reference ``qpack_zonechunk.go``; docs/FORMAT.md §1.2): ``F1 kind zmap blkLog
uvarint(n)``, a u32 offset per zone (relative to the first body, first 0, strictly
increasing), the zone map, then each zone as an independent payload (a QPack integer
payload picked per zone, or a float slice). kind 00 int64 / 01 uint64 / 02 float64;
zmap 00 per-zone [min, max] (zigzag / plain uvarints, or 8+8 byte float bits with NaN
excluded and an all-NaN zone stored as (+inf, -inf)); zmap 01 a learned linear model
``row ~ c*value + d`` within +-epsP rows for a sorted int/uint column (two f64 + uvarint).
Written only under ``Options.ZONE_MAP`` (a size-for-skipping trade, as in the reference).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

from ..format.reader import ByteReader
from ..format.tags import QPackTag
from ..format.varint import uvarint_len, write_uvarint, zigzag

KIND_INT, KIND_UINT, KIND_FLOAT = 0x00, 0x01, 0x02
ZMAP_MINMAX, ZMAP_LINEAR = 0x00, 0x01
BLK_LOG = 8
ZONE_ROWS = 1 << BLK_LOG
MIN_ROWS = 2 * ZONE_ROWS  # the reference's zoneChunkMinLen
_BLOCK_SIZES = {8: 256, 10: 1024}
_F64 = struct.Struct("<d")


@dataclass
class ZoneHeader:
    kind: int
    zmap: int
    blk: int
    n: int
    starts: np.ndarray  # absolute byte offset of each zone body
    mins: np.ndarray | None = None  # per-zone bounds (zmap min/max)
    maxs: np.ndarray | None = None
    lin: tuple[float, float, int] | None = None  # (c, d, epsP) for zmap linear

    @property
    def zones(self) -> int:
        return len(self.starts)

    def zone_rows(self, z: int) -> int:
        return self.blk if z < self.zones - 1 else self.n - z * self.blk


# ------------------------------------------------------------------------- encode
def _linear_fit(values: np.ndarray) -> tuple[float, float, int] | None:
    """The reference's fitLinearZmap: sorted column, least squares of row on value."""
    n = len(values)
    if n < 2 or np.any(values[1:] < values[:-1]):
        return None
    x = values.astype(np.float64)
    y = np.arange(n, dtype=np.float64)
    # cumsum adds left to right like the reference's loop, so the model's bits match.
    sx, sy = float(np.cumsum(x)[-1]), float(np.cumsum(y)[-1])
    sxx, sxy = float(np.cumsum(x * x)[-1]), float(np.cumsum(x * y)[-1])
    denom = n * sxx - sx * sx
    if not denom > 0:
        return None
    c = (n * sxy - sx * sy) / denom
    d = (sy - c * sx) / n
    if not c > 0 or math.isinf(c) or math.isnan(d) or math.isinf(d):
        return None
    eps = int(math.ceil(float(np.max(np.abs(y - (c * x + d)))))) + 1
    return (c, d, eps) if eps <= ZONE_ROWS else None


def write_zone_chunk(out: bytearray, values: np.ndarray, *, compress: bool = False) -> None:
    """Append ``values`` (int64, uint64 or float64; len >= 1) as one F1 payload.

    ``compress`` lets float zones use the compression tier's float codecs.
    """
    from . import qpack
    from .qpack import encode_int_array

    # The compression tier's float picker may not be present in every build: raw is always valid.
    encode_float = getattr(qpack, "encode_float_array", None)

    n = len(values)
    if values.dtype == np.float64:
        kind = KIND_FLOAT
    else:
        kind = KIND_UINT if values.dtype == np.uint64 else KIND_INT
    zones = (n + ZONE_ROWS - 1) // ZONE_ROWS
    bounds = [(values[i : i + ZONE_ROWS]) for i in range(0, n, ZONE_ROWS)]
    zmap = bytearray()
    lin = _linear_fit(values) if kind != KIND_FLOAT else None
    if kind == KIND_FLOAT:
        for z in bounds:
            finite = z[~np.isnan(z)]
            lo, hi = (float(finite.min()), float(finite.max())) if len(finite) else (math.inf, -math.inf)
            zmap += _F64.pack(lo) + _F64.pack(hi)
    else:
        for z in bounds:
            lo, hi = int(z.min()), int(z.max())
            write_uvarint(zmap, zigzag(lo) if kind == KIND_INT else lo)
            write_uvarint(zmap, zigzag(hi) if kind == KIND_INT else hi)
        if lin is not None and 16 + uvarint_len(lin[2]) < len(zmap):
            zmap = bytearray(_F64.pack(lin[0]) + _F64.pack(lin[1]))
            write_uvarint(zmap, lin[2])
        else:
            lin = None
    out += bytes((QPackTag.ZONE, kind, ZMAP_LINEAR if lin else ZMAP_MINMAX, BLK_LOG))
    write_uvarint(out, n)
    bodies = bytearray()
    offsets = []
    for z in bounds:
        offsets.append(len(bodies))
        if kind == KIND_FLOAT:
            if encode_float is not None:
                encode_float(bodies, np.ascontiguousarray(z), compress=compress)
            else:
                qpack.encode_float_raw(bodies, np.ascontiguousarray(z))
        else:
            encode_int_array(bodies, np.ascontiguousarray(z))
    assert len(offsets) == zones
    out += np.asarray(offsets, dtype="<u4").tobytes()
    out += zmap
    out += bodies


# ------------------------------------------------------------------------- decode
def read_zone_header(r: ByteReader, *, load_map: bool = True) -> ZoneHeader:
    """Parse an F1 header from just after the tag, leaving ``r`` at the first zone body."""
    at = r.pos
    kind = r.u8("the zone kind")
    if kind not in (KIND_INT, KIND_UINT, KIND_FLOAT):
        raise r.corrupt(f"unknown zone chunk kind {kind:#04x}", at)
    zmap = r.u8("the zone map kind")
    if zmap not in (ZMAP_MINMAX, ZMAP_LINEAR) or (zmap == ZMAP_LINEAR and kind == KIND_FLOAT):
        raise r.corrupt(f"zone map kind {zmap:#04x} is not valid for zone kind {kind:#04x}", at + 1)
    blk = _BLOCK_SIZES.get(r.u8("the zone size"))
    if blk is None:
        raise r.corrupt("zone size log must be 8 or 10", at + 2)
    nat = r.pos
    n = r.count("the zone chunk row count", min_bytes_each=0, limit=1 << 24)
    if n == 0:
        raise r.corrupt("a zone chunk holds no rows", nat)
    zones = (n + blk - 1) // blk
    # every zone needs a u32 offset and a payload of >= 3 bytes: bound before allocating
    r.need(7 * zones, "the zone offset table and bodies")
    rel = np.frombuffer(r.take(4 * zones, "the zone offset table"), dtype="<u4").astype(np.int64)
    h = ZoneHeader(kind, zmap, blk, n, rel)
    if zmap == ZMAP_LINEAR:
        c, d = r.f64("the linear zone model"), r.f64("the linear zone model")
        eps = r.uvarint("the linear zone model error")
        if load_map and (not c > 0 or math.isinf(c) or math.isnan(d) or math.isinf(d)):
            raise r.corrupt("linear zone model is not a finite positive slope")
        h.lin = (c, d, eps)
    elif kind == KIND_FLOAT:
        raw = np.frombuffer(r.take(16 * zones, "the zone map"), dtype="<f8").reshape(zones, 2)
        h.mins, h.maxs = raw[:, 0].copy(), raw[:, 1].copy()
    else:
        mins = np.empty(zones, dtype=np.int64 if kind == KIND_INT else np.uint64)
        maxs = np.empty_like(mins)
        for z in range(zones):
            lo, hi = r.uvarint("a zone minimum"), r.uvarint("a zone maximum")
            if kind == KIND_INT:
                lo, hi = (lo >> 1) ^ -(lo & 1), (hi >> 1) ^ -(hi & 1)
            if lo > hi:
                raise r.corrupt(f"zone {z} has minimum {lo} above maximum {hi}")
            mins[z], maxs[z] = lo, hi
        h.mins, h.maxs = mins, maxs
    body_start = r.pos
    if rel[0] != 0 or np.any(np.diff(rel) <= 0) or body_start + int(rel[-1]) >= r.end:
        raise r.corrupt("zone offset table is not 0-based, increasing and inside the input", body_start)
    h.starts = rel + body_start
    return h


def _decode_zone(r: ByteReader, h: ZoneHeader, z: int) -> np.ndarray:
    from .qpack import decode_float_payload, decode_int_payload

    r.pos = int(h.starts[z])
    want = h.zone_rows(z)
    if h.kind == KIND_FLOAT:
        return decode_float_payload(r, n=want).astype(np.float64, copy=False)
    vals = decode_int_payload(r, n=want)
    return vals.astype(np.int64 if h.kind == KIND_INT else np.uint64, copy=False)


def dtype_of(h: ZoneHeader) -> type:
    return {KIND_INT: np.int64, KIND_UINT: np.uint64, KIND_FLOAT: np.float64}[h.kind]


def decode_zones(r: ByteReader, h: ZoneHeader, zones: np.ndarray | None = None) -> np.ndarray:
    """All n values, decoding only ``zones`` (bool per zone; others left 0); r ends after the chunk."""
    from ..columns import alloc

    out = alloc.empty(h.n, dtype_of(h))
    for z in range(h.zones):
        if zones is None or zones[z]:
            out[z * h.blk : z * h.blk + h.zone_rows(z)] = _decode_zone(r, h, z)
        elif zones is not None:
            out[z * h.blk : z * h.blk + h.zone_rows(z)] = 0
    skip_to_end(r, h)
    return out


def skip_to_end(r: ByteReader, h: ZoneHeader) -> None:
    """Move ``r`` past the last zone body (its length is not stored: walk it)."""
    from .qpack import skip_payload

    r.pos = int(h.starts[-1])
    skip_payload(r)


def zones_for_range(h: ZoneHeader, lo: float, hi: float) -> np.ndarray:
    """Zones whose values may fall in [lo, hi] (inclusive); conservative, never misses a row."""
    if h.lin is not None:
        c, d, eps = h.lin
        out = np.zeros(h.zones, dtype=bool)
        p_lo, p_hi = c * lo + d - eps, c * hi + d + eps
        if math.isnan(p_lo) or math.isnan(p_hi) or p_hi < 0 or p_lo > h.n - 1:
            return out
        zlo = int(math.floor(max(p_lo, 0.0))) // h.blk
        zhi = int(math.floor(min(p_hi, float(h.n - 1)))) // h.blk
        out[zlo : zhi + 1] = True
        return out
    assert h.mins is not None and h.maxs is not None
    with np.errstate(invalid="ignore"):
        return (h.maxs.astype(np.float64) >= lo) & (h.mins.astype(np.float64) <= hi)
