"""Lossless float payloads of the v1 compression tier: E7 PackGorilla (kind 0x0B float64,
0x0A float32), E7 with kind 0x0F (Chimp128, float64), F4 PackALP (kind 0x0B / 0x0A) and
F4 with kind 0x0F (ALP-RD float64), plus the §3.2 float picker.

Layouts and the picker follow the Go encoder (encodeSliceFloat64Lossless /
encodeSliceFloat32Lossless, pickF64Codec, pickF32Codec, pickChimpF64, alpPlanFloat64/32):

* raw size is exact: ``2 + uvarintLen(n) + width*n``;
* the ALP plan picks d in 0..15 on an evenly spaced sample (``s[::n//32]`` when n > 32)
  by ``ceil(w*len/8) + 10*exc`` (6*exc for float32); for float64 each exponent keeps the
  cheaper of multiply / divide ("exact", 0x80) reconstruction by bytes (13 B/exception);
  its estimate charges 13 B (float32: 9 B) per exception and wins only if < raw;
* Gorilla (and for float64 Chimp128) is attempted only when its 32-pair projection passes
  the gate, is really written, and kept only if < raw and (when ALP wins) <= the ALP estimate;
* ALP-RD (float64, n >= 16; Go alprdPlanFloat64 reproduced exactly: cut 8..16 and <= 8
  left patterns from a <= 2048-value sample, exceptions counted over the whole column,
  estimate charging 7 B per exception) then replaces that choice only when strictly
  smaller: its estimate (an upper bound) must beat the chosen payload's size, and against
  ALP (whose size is also only an estimate) both are written and the real sizes compared.

ALP-RD layout (Go qpack_alprd.go): ``F4 0F uvarint(n)``; n > 0: ``leftBW`` (8..16),
``D`` (1..8), D x u16 LE dictionary, ceil(n*ceil(log2 D)/8) LSB-first code bytes (none
when D == 1), ceil(n*(64-leftBW)/8) LSB-first right-bit bytes, ``uvarint(excN)``, excN x
(``uvarint(position)``, u16 LE left bits); an exception's code slot is 0.

Deviation (documented in the report): the Go source stored for this port has no call
site of pickChimpF64; Chimp is attempted per the reference notes (gate < 58 bits/value)
and kept over Gorilla only when strictly smaller.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from qdf_kernels import alp as kalp
from qdf_kernels import chimp as kchimp
from qdf_kernels import gorilla as kgor
from qdf_kernels._status import ERR_CORRUPT, ERR_TRUNCATED

from ..columns import alloc
from ..errors import InvalidOptionError, TruncatedError, UnknownCodecError, UnsupportedTypeError
from ..format.reader import ByteReader
from ..format.tags import Kind, QPackTag
from ..format.varint import MASK64, uvarint_len, write_uvarint, zigzag
from .intenc import MAX_ROWS

__all__ = [
    "encode_floats",
    "decode_compressed",
    "skip_compressed",
    "alp_plan",
    "AlpPlan",
    "alprd_plan",
    "AlpRdPlan",
    "FORCE",
]

FORCE = (None, "raw", "gorilla", "chimp", "alp", "alprd")
ALP_EXACT = 0x80
ALP_MAX_EXP = 18  # decoder accepts 0..18, the encoder searches 0..15
ALP_SEARCH = 15
FOR_MAX_BITS = 56
_CHIMP_KIND = int(Kind.CHIMP_F64)
# Go builds alpPow10 by repeated *10 (exact through 10**22) and alpInv10 as 1.0/p.
_POW10 = [float(10**i) for i in range(ALP_MAX_EXP + 1)]
_INV10 = [1.0 / p for p in _POW10]
_CHIMP_ROUND = [0] * 8 + [8] * 4 + [12] * 4 + [16, 16, 18, 18, 20, 20, 22, 22] + [24] * 41


@dataclass(frozen=True)
class _Fmt:
    """Per-width constants: float dtype, bit-pattern dtype, bytes, kind, sign mask."""

    fdt: np.dtype
    udt: np.dtype
    width: int
    kind: int
    sign: int


_F64 = _Fmt(np.dtype("<f8"), np.dtype("<u8"), 8, int(Kind.F64), 1 << 63)
_F32 = _Fmt(np.dtype("<f4"), np.dtype("<u4"), 4, int(Kind.F32), 1 << 31)


@dataclass(frozen=True)
class AlpPlan:
    """Go alpFloatPlan: exponent, FOR base, bit width, exception count, divide flag."""

    d: int
    for_min: int
    width: int
    exc: int
    exact: bool


@dataclass(frozen=True)
class AlpRdPlan:
    """Go alprdPlan: cut (left bit width), dictionary of left patterns, exception count."""

    left_bw: int
    dictionary: tuple[int, ...]
    exc: int


# ------------------------------------------------------------------------ encoding
def _raw_size(n: int, width: int) -> int:
    return 2 + uvarint_len(n) + width * n


def _emit_raw(out: bytearray, a: np.ndarray, f: _Fmt) -> None:
    out += bytes((QPackTag.RAW, f.kind))
    write_uvarint(out, int(a.shape[0]))
    out += a.tobytes()


def _xor_payload(a: np.ndarray, f: _Fmt, chimp: bool) -> bytes:
    """Whole E7 payload (tag .. body) for Gorilla or Chimp128; n=1 carries totalBits 0."""
    n = int(a.shape[0])
    out = bytearray((QPackTag.GORILLA, _CHIMP_KIND if chimp else f.kind))
    write_uvarint(out, n)
    if n == 0:
        return bytes(out)
    out += a[:1].tobytes()
    if n == 1:
        out.append(0)
        return bytes(out)
    u = a.view(f.udt)
    # Worst case per value: Gorilla f64 2+5+6+64 = 77 bits, Chimp 69, Gorilla f32 43.
    buf = np.empty(((n - 1) * 77 + 7) // 8 + 8, dtype=np.uint8)
    bits = int(kchimp.chimp_encode(u, buf) if chimp else kgor.gorilla_encode(u, 8 * f.width, buf))
    write_uvarint(out, bits)
    out += buf[: (bits + 7) // 8].tobytes()
    return bytes(out)


def _xor_pairs(u: np.ndarray) -> list[int]:
    probe = min(32, u.shape[0] - 1)
    return [int(x) for x in (u[1 : probe + 1] ^ u[:probe])]


def _gorilla_gate(u: np.ndarray, f: _Fmt) -> bool:
    """pickF64Codec / pickF32Codec: avg(repeat 1, else meaningful + 14 (f32: 11)) + 1 < 48 (24)."""
    if u.shape[0] < 8:
        return False
    xs = _xor_pairs(u)
    over = 14 if f.width == 8 else 11
    total = sum(1 if x == 0 else x.bit_length() - ((x & -x).bit_length() - 1) + over for x in xs)
    return total // len(xs) + 1 < (48 if f.width == 8 else 24)


def _chimp_gate(u: np.ndarray) -> bool:
    """pickChimpF64: avg(repeat 9, else 5 + 64 - roundedLZ) < 58 bits/value."""
    if u.shape[0] < 8:
        return False
    xs = _xor_pairs(u)
    total = sum(9 if x == 0 else 69 - _CHIMP_ROUND[64 - x.bit_length()] for x in xs)
    return total // len(xs) < 58


def _width_of(lo: int, hi: int) -> int:
    return 0 if lo > hi else ((hi - lo) & MASK64).bit_length()


def _alp_score(a: np.ndarray, f: _Fmt, d: int) -> tuple[int, int, int, bool]:
    """Go alpScoreExp / alpScoreExpF32: (forMin, width, exc, exact) at exponent d."""
    st = np.empty(6, dtype=np.int64)
    kalp.alp_score(a, a.view(f.udt), f.udt.type(f.sign), _POW10[d], _INV10[d], st)
    mn_m, mx_m, exc_m, mn_d, mx_d, exc_d = (int(x) for x in st)
    exact = False
    if f.width == 8:
        # Reconstruction chosen by bytes (13 B per exception); ties keep multiply.
        n = a.shape[0]
        cost_d = (_width_of(mn_d, mx_d) * n + 7) // 8 + exc_d * 13
        cost_m = (_width_of(mn_m, mx_m) * n + 7) // 8 + exc_m * 13
        exact = cost_d < cost_m
    mn, mx, exc = (mn_d, mx_d, exc_d) if exact else (mn_m, mx_m, exc_m)
    if mn > mx:
        return 0, 0, exc, exact
    return mn, _width_of(mn, mx), exc, exact


def alp_plan(a: np.ndarray) -> tuple[AlpPlan | None, int]:
    """Go alpPlanFloat64/32: (plan, conservative size estimate), plan None when ALP cannot apply."""
    f = _F64 if a.dtype.itemsize == 8 else _F32
    n = int(a.shape[0])
    if n == 0:
        return AlpPlan(0, 0, 0, 0, False), 3
    if n > MAX_ROWS:
        return None, 0
    sample = a[:: n // 32] if n > 32 else a
    sample = np.ascontiguousarray(sample)
    exc_cost = 10 if f.width == 8 else 6
    best_d, best_cost = 0, None
    for d in range(ALP_SEARCH + 1):
        _, w, exc, _ = _alp_score(sample, f, d)
        cost = (w * sample.shape[0] + 7) // 8 + exc * exc_cost
        if best_cost is None or cost < best_cost:
            best_d, best_cost = d, cost
    for_min, width, exc, exact = _alp_score(a, f, best_d)
    if width > FOR_MAX_BITS or exc >= n:
        return None, 0
    est = (
        2
        + uvarint_len(n)
        + 1
        + uvarint_len(zigzag(for_min))
        + 1
        + (width * n + 7) // 8
        + uvarint_len(exc)
        + exc * (5 + f.width)
    )
    return AlpPlan(best_d, for_min, width, exc, exact), est


def _emit_alp(out: bytearray, a: np.ndarray, plan: AlpPlan, all_exc: bool = False) -> None:
    """Write F4 for ``plan``; ``all_exc`` makes every value an exception (forced ALP on data
    ALP cannot represent: a NaN scale never round-trips, and the wire needs no scale then)."""
    f = _F64 if a.dtype.itemsize == 8 else _F32
    n = int(a.shape[0])
    out += bytes((QPackTag.ALP, f.kind))
    write_uvarint(out, n)
    if n == 0:
        return
    out.append(plan.d | (ALP_EXACT if plan.exact else 0))
    write_uvarint(out, zigzag(plan.for_min))
    out.append(plan.width)
    u = a.view(f.udt)
    body = np.empty((n * plan.width + 7) // 8, dtype=np.uint8)
    idx = np.empty(n, dtype=np.int64)
    mode = 2 if f.width == 4 else (1 if plan.exact else 0)
    pe, ie = (float("nan"), float("nan")) if all_exc else (_POW10[plan.d], _INV10[plan.d])
    sign = f.udt.type(f.sign)
    nexc = int(kalp.alp_pack(a, u, sign, pe, ie, mode, np.int64(plan.for_min), plan.width, body, idx))
    out += body.tobytes()
    write_uvarint(out, nexc)
    if nexc:
        ebuf = np.empty(nexc * (10 + f.width), dtype=np.uint8)
        end = kalp.alp_put_exceptions(idx, nexc, u, f.width, ebuf, 0)
        out += ebuf[:end].tobytes()


ALPRD_MIN_ROWS = 16  # Go: "header + dictionary dominate tiny slices"


def _alprd_search(u: np.ndarray) -> AlpRdPlan | None:
    """The planner without the size gates (None only when there is nothing to sample)."""
    if u.shape[0] == 0:
        return None
    keys = np.zeros(4096, dtype=np.uint16)
    cnts = np.zeros(4096, dtype=np.int32)
    dct = np.zeros(kalp.ALPRD_MAX_DICT, dtype=np.uint16)
    meta = np.zeros(3, dtype=np.int64)
    kalp.alprd_plan(u, keys, cnts, dct, meta)
    left_bw, d, exc = (int(x) for x in meta)
    if d == 0:
        return None
    return AlpRdPlan(left_bw, tuple(int(x) for x in dct[:d]), exc)


def _alprd_size(n: int, plan: AlpRdPlan) -> int:
    """Go's ALP-RD estimate: exact bodies plus 7 B per exception (an upper bound)."""
    d = len(plan.dictionary)
    return (
        2
        + uvarint_len(n)
        + 2
        + 2 * d
        + (n * int(kalp.alprd_code_bits(d)) + 7) // 8
        + (n * (64 - plan.left_bw) + 7) // 8
        + uvarint_len(plan.exc)
        + plan.exc * 7
    )


def alprd_plan(a: np.ndarray) -> tuple[AlpRdPlan | None, int]:
    """Go alprdPlanFloat64: (plan, size upper bound); plan None for n < 16, above the row
    cap, or when the estimate is not below raw."""
    n = int(a.shape[0])
    if a.dtype.itemsize != 8 or n < ALPRD_MIN_ROWS or n > MAX_ROWS:
        return None, 0
    plan = _alprd_search(np.ascontiguousarray(a).view(np.uint64))
    if plan is None:
        return None, 0
    est = _alprd_size(n, plan)
    if est >= _raw_size(n, 8):
        return None, 0
    return plan, est


def _alprd_payload(a: np.ndarray, plan: AlpRdPlan | None) -> bytes:
    """Whole F4 0F payload for ``plan`` (None only for n == 0)."""
    n = int(a.shape[0])
    out = bytearray((QPackTag.ALP, _CHIMP_KIND))
    write_uvarint(out, n)
    if n == 0:
        return bytes(out)
    assert plan is not None
    d = len(plan.dictionary)
    out += bytes((plan.left_bw, d))
    dct = np.asarray(plan.dictionary, dtype="<u2")
    out += dct.tobytes()
    u = a.view(np.uint64)
    cb = int(kalp.alprd_code_bits(d))
    cap = (n * cb + 7) // 8 + (n * (64 - plan.left_bw) + 7) // 8 + 10 + 12 * n
    buf = np.empty(cap, dtype=np.uint8)
    end = int(kalp.alprd_encode(u, plan.left_bw, dct.astype(np.uint16), d, buf, 0, np.empty(n, dtype=np.int64)))
    out += buf[:end].tobytes()
    return bytes(out)


def encode_floats(out: bytearray, values: np.ndarray, *, compress: bool, force: str | None = None,
                  light: bool = False) -> None:
    """Append one float payload: raw E4 when not ``compress``, else the §3.2 picker's choice.

    ``light`` keeps only the schemes that decode at memory speed (ALP, ALP-RD, raw):
    no Gorilla / Chimp128 bit streams, which decode one value after another.
    ``force`` ("raw", "gorilla", "chimp" (float64 only), "alp", "alprd" (float64 only))
    bypasses the picker for tests; forced ALP-RD skips the planner's size gates.
    """
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype not in (np.float64, np.float32):
        raise UnsupportedTypeError(f"expected a 1-D float32/float64 array, got {arr.dtype}")
    if force not in FORCE:
        raise InvalidOptionError(f"unknown float codec {force!r}; expected one of {FORCE[1:]}")
    f = _F64 if arr.dtype == np.float64 else _F32
    a = np.ascontiguousarray(arr, dtype=f.fdt)  # bit patterns kept (no value conversion)
    n = int(a.shape[0])
    if force in ("chimp", "alprd") and f.width == 4:
        raise InvalidOptionError(f"{force} exists only for float64 on the v1 wire this port writes")
    if not compress or force == "raw":
        _emit_raw(out, a, f)
        return
    if force in ("gorilla", "chimp"):
        out += _xor_payload(a, f, force == "chimp")
        return
    if force == "alprd":
        out += _alprd_payload(a, _alprd_search(a.view(np.uint64)))
        return
    plan, est = alp_plan(a)
    if force == "alp":
        if plan is None:  # width > 56 or nothing packs: still lossless, every value an exception
            _emit_alp(out, a, AlpPlan(0, 0, 0, n, False), all_exc=True)
        else:
            _emit_alp(out, a, plan)
        return
    raw = _raw_size(n, f.width)
    alp_wins = plan is not None and est < raw
    best: bytes | None = None
    u = a.view(f.udt)
    cands = [] if light else [False] if f.width == 4 else [False, True]
    for chimp in cands:
        if not (_chimp_gate(u) if chimp else _gorilla_gate(u, f)):
            continue
        p = _xor_payload(a, f, chimp)
        if len(p) < raw and (not alp_wins or est >= len(p)) and (best is None or len(p) < len(best)):
            best = p
    if f.width == 8:
        rd, rd_est = alprd_plan(a)
        # ALP-RD only when strictly smaller than the choice above (never-larger rule).
        if rd is not None and rd_est < (len(best) if best is not None else est if alp_wins else raw):
            rd_payload = _alprd_payload(a, rd)
            if best is None and alp_wins:
                assert plan is not None
                alp = bytearray()
                _emit_alp(alp, a, plan)  # the ALP estimate is only an upper bound: measure
                best = rd_payload if len(rd_payload) < len(alp) else bytes(alp)
            else:
                best = rd_payload
    if best is not None:
        out += best
    elif alp_wins:
        assert plan is not None
        _emit_alp(out, a, plan)
    else:
        _emit_raw(out, a, f)


# ------------------------------------------------------------------------ decoding
def _check(r: ByteReader, rc: int, what: str, start: int) -> None:
    if rc == ERR_TRUNCATED:
        raise TruncatedError(f"{what} ends before its declared values", column=r.column, offset=start)
    if rc < 0:
        raise r.corrupt(f"{what} is inconsistent", start)


def _kind(r: ByteReader, tag: int) -> tuple[int, _Fmt]:
    at = r.pos
    kind = r.u8("a kind byte")
    if kind == Kind.F64 or kind == _CHIMP_KIND:
        return kind, _F64
    if kind == Kind.F32:
        return kind, _F32
    if tag == QPackTag.ALP and kind == Kind.ALP_RD_F32:
        raise UnknownCodecError("ALP-RD float32 (F4 kind 0x0e) is not supported", column=r.column, offset=at)
    raise r.corrupt(f"kind 0x{kind:02x} is not valid under tag 0x{tag:02x}", at)


def _count(r: ByteReader, expect: int | None, what: str) -> tuple[int, int]:
    start = r.pos
    c = r.uvarint(what)
    if expect is not None and c != expect:
        raise r.corrupt(f"{what} is {c} but the column has {expect} rows", start)
    return c, start


def _xor_header(r: ByteReader, f: _Fmt, expect: int | None) -> tuple[int, bytes, np.ndarray | None]:
    """Go readPackedGorillaHeader: (n, first value bytes, body or None)."""
    c, start = _count(r, expect, "float XOR element count")
    if c > r.remaining * 8 + 1:  # every value after the first costs >= 1 bit
        raise TruncatedError(f"XOR payload declares {c} values in {r.remaining} bytes", column=r.column, offset=start)
    if c == 0:
        return 0, b"", None
    first = r.take_bytes(f.width, "the first float value")
    at = r.pos
    nb = r.uvarint("XOR body bit count")
    if c == 1:
        if nb != 0:
            raise r.corrupt(f"single-value XOR payload declares {nb} body bits", at)
        return 1, first, None
    if nb > r.remaining * 8:
        raise TruncatedError(f"XOR body declares {nb} bits in {r.remaining} bytes", column=r.column, offset=at)
    return c, first, r.take_array((nb + 7) // 8, "XOR body")


def _decode_xor(r: ByteReader, expect: int | None) -> np.ndarray:
    kind, f = _kind(r, QPackTag.GORILLA)
    c, first, body = _xor_header(r, f, expect)
    out = alloc.empty(c, f.udt)
    if c:
        out[0] = np.frombuffer(first, dtype=f.udt)[0]
    if body is not None:
        start = r.pos - body.shape[0]
        if kind == _CHIMP_KIND:
            rc = kchimp.chimp_decode(body, out[0], out)
        else:
            rc = kgor.gorilla_decode(body, 8 * f.width, out[0], out)
        _check(r, int(rc), "Chimp128 body" if kind == _CHIMP_KIND else "Gorilla body", start)
    return out.view(f.fdt)


def _alp_header(r: ByteReader, f: _Fmt, expect: int | None) -> tuple[int, int, bool, int, int, int]:
    """(n, d, exact, forMin, width, body start); raises before anything is allocated."""
    c, start = _count(r, expect, "ALP element count")
    if c == 0:
        return 0, 0, False, 0, 0, start
    if c > MAX_ROWS:
        raise r.corrupt(f"ALP element count {c} exceeds the limit {MAX_ROWS}", start)
    at = r.pos
    e = r.u8("the ALP exponent byte")
    d = e & ~ALP_EXACT
    if d > ALP_MAX_EXP:
        raise r.corrupt(f"ALP exponent {d} exceeds {ALP_MAX_EXP}", at)
    for_min = r.zigzag("ALP frame of reference")
    at = r.pos
    width = r.u8("the ALP bit width")
    if width > FOR_MAX_BITS:
        raise r.corrupt(f"ALP bit width {width} exceeds {FOR_MAX_BITS}", at)
    if (c * width + 7) // 8 > r.remaining:
        raise TruncatedError(f"ALP body of {c} x {width} bits exceeds the input", column=r.column, offset=at)
    return c, d, bool(e & ALP_EXACT), for_min, width, r.pos


def _exc_count(r: ByteReader, c: int, each: int) -> int:
    at = r.pos
    k = r.uvarint("exception count")
    if k > c:
        raise r.corrupt(f"exception count {k} exceeds the element count {c}", at)
    if k * each > r.remaining:
        raise TruncatedError(f"{k} exceptions need at least {k * each} bytes", column=r.column, offset=at)
    return k


def _decode_alp(r: ByteReader, f: _Fmt, expect: int | None) -> np.ndarray:
    c, d, exact, for_min, width, start = _alp_header(r, f, expect)
    out = alloc.empty(c, f.fdt)
    if c == 0:
        return out
    body = r.take_array((c * width + 7) // 8, "ALP body")
    rc = kalp.alp_decode(body, width, np.int64(for_min), _POW10[d], _INV10[d], exact, out)
    _check(r, int(rc), "ALP body", start)
    k = _exc_count(r, c, 1 + f.width)
    if k:
        at = r.pos
        tail = r.array()[r.pos : r.end]
        end = int(kalp.alp_patch(tail, 0, k, f.width, out.view(f.udt)))
        _check(r, end, "ALP exception list", at)
        r.pos += end
    return out


def _alprd_header(r: ByteReader, expect: int | None) -> tuple[int, int, np.ndarray]:
    c, start = _count(r, expect, "ALP-RD element count")
    if c > r.remaining // 6 + 1:  # every value carries >= 48 right bits
        raise TruncatedError(f"ALP-RD payload declares {c} values", column=r.column, offset=start)
    if c == 0:
        return 0, 0, np.empty(0, np.uint64)
    at = r.pos
    left_bw = r.u8("ALP-RD left width")
    dn = r.u8("ALP-RD dictionary size")
    if not (8 <= left_bw <= 16 and 1 <= dn <= 8):
        raise r.corrupt(f"ALP-RD left width {left_bw} / dictionary size {dn} out of range", at)
    table = r.take_array(2 * dn, "ALP-RD dictionary").view("<u2").astype(np.uint64)
    return c, left_bw, table


def _decode_alprd(r: ByteReader, expect: int | None) -> np.ndarray:
    c, left_bw, table = _alprd_header(r, expect)
    out = alloc.empty(c, np.uint64)
    if c == 0:
        return out.view(np.float64)
    dn = table.shape[0]
    cbits = (dn - 1).bit_length()
    rbw = 64 - left_bw
    at = r.pos
    need = (c * cbits + 7) // 8 + (c * rbw + 7) // 8
    if need > r.remaining:
        raise TruncatedError(f"ALP-RD bodies need {need} bytes", column=r.column, offset=at)
    codes = r.take_array((c * cbits + 7) // 8)
    rights = r.take_array((c * rbw + 7) // 8)
    rc = int(kalp.alprd_decode(codes, cbits, rights, rbw, table, out))
    if rc == ERR_CORRUPT:
        raise r.corrupt("ALP-RD dictionary code out of range", at)
    _check(r, rc, "ALP-RD bodies", at)
    k = _exc_count(r, c, 3)
    if k:
        at = r.pos
        tail = r.array()[r.pos : r.end]
        end = int(kalp.alprd_patch(tail, 0, k, rbw, out))
        _check(r, end, "ALP-RD exception list", at)
        r.pos += end
    return out.view(np.float64)


def decode_compressed(r: ByteReader, *, n: int | None = None) -> np.ndarray:
    """Read one E7 or F4 payload at ``r.pos`` (the tag) into a fresh float64/float32 array."""
    at = r.pos
    tag = r.u8("a QPack tag")
    if tag == QPackTag.GORILLA:
        return _decode_xor(r, n)
    if tag != QPackTag.ALP:
        raise UnknownCodecError(f"tag 0x{tag:02x} is not a compressed float payload", column=r.column, offset=at)
    kind, f = _kind(r, tag)
    if kind == _CHIMP_KIND:
        return _decode_alprd(r, n)
    return _decode_alp(r, f, n)


def skip_compressed(r: ByteReader) -> None:
    """Advance past one E7 / F4 payload, validating headers and counts like the decoder."""
    tag = r.u8("a QPack tag")
    if tag == QPackTag.GORILLA:
        _, f = _kind(r, tag)
        _xor_header(r, f, None)
        return
    kind, f = _kind(r, tag)
    if kind == _CHIMP_KIND:
        c, left_bw, table = _alprd_header(r, None)
        if c:
            cb = (table.shape[0] - 1).bit_length()
            r.skip((c * cb + 7) // 8 + (c * (64 - left_bw) + 7) // 8, "ALP-RD bodies")
            for _ in range(_exc_count(r, c, 3)):
                r.uvarint("ALP-RD exception position")
                r.skip(2, "ALP-RD exception left bits")
        return
    c, _, _, _, width, _ = _alp_header(r, f, None)
    if c:
        r.skip((c * width + 7) // 8, "ALP body")
        for _ in range(_exc_count(r, c, 1 + f.width)):
            r.uvarint("ALP exception index")
            r.skip(f.width, "ALP exception value")
