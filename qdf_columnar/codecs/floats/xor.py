"""E7 XOR float streams: PackGorilla (kind 0x0B float64, 0x0A float32) and Chimp128
(kind 0x0F, float64).

Layout: ``E7 kind uvarint(n)``; n > 0: the first value's raw bytes, ``uvarint(body
bits)`` (0 when n == 1), then the bit stream. Each is attempted only when its 32-pair
projection passes Go's gate (pickF64Codec / pickF32Codec; pickChimpF64), and is then
really written, so its cost is exact. They decode one value after another, so the
balanced mode (memory-speed codecs only) never uses them.
"""

from __future__ import annotations

import numpy as np
from qdf_kernels import chimp as kchimp
from qdf_kernels import gorilla as kgor

from ...columns import alloc
from ...errors import InvalidOptionError, TruncatedError
from ...format.reader import ByteReader
from ...format.tags import Kind, QPackTag
from ...format.varint import write_uvarint
from .unit import KIND_0F, FloatPlan, Fmt, check, count

_CHIMP_ROUND = [0] * 8 + [8] * 4 + [12] * 4 + [16, 16, 18, 18, 20, 20, 22, 22] + [24] * 41


def _xor_pairs(u: np.ndarray) -> list[int]:
    probe = min(32, u.shape[0] - 1)
    return [int(x) for x in (u[1 : probe + 1] ^ u[:probe])]


def _header(r: ByteReader, f: Fmt, expect: int | None) -> tuple[int, bytes, np.ndarray | None]:
    """Go readPackedGorillaHeader: (n, first value bytes, body or None)."""
    c, start = count(r, "float XOR element count", expect)
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


class _XorStream:
    name: str
    chimp: bool
    reference = "PackGorilla"
    memory_speed = False

    def gate(self, u: np.ndarray, f: Fmt) -> bool:
        raise NotImplementedError

    def payload(self, a: np.ndarray, f: Fmt, to_beat: int | None = None) -> bytes | None:
        """The whole E7 payload (tag .. body); n == 1 carries totalBits 0. None as soon as
        its body alone is larger than ``to_beat`` bytes (the payload cannot be kept then)."""
        n = int(a.shape[0])
        out = bytearray((QPackTag.GORILLA, KIND_0F if self.chimp else f.kind))
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
        limit = np.int64(-1 if to_beat is None else to_beat)
        if self.chimp:
            bits = int(kchimp.chimp_encode(u, buf, limit))
        else:
            bits = int(kgor.gorilla_encode(u, 8 * f.width, buf, limit))
        if bits < 0:
            return None
        write_uvarint(out, bits)
        out += buf[: (bits + 7) // 8].tobytes()
        return bytes(out)

    def estimate(self, a: np.ndarray, f: Fmt, to_beat: int | None = None) -> FloatPlan | None:
        if (self.chimp and f.width != 8) or not self.gate(a.view(f.udt), f):
            return None
        p = self.payload(a, f, to_beat)
        return None if p is None else FloatPlan(self.name, len(p), True, payload=p)

    def force(self, a: np.ndarray, f: Fmt) -> FloatPlan:
        if self.chimp and f.width != 8:
            raise InvalidOptionError(f"{self.name} exists only for float64 on the v1 wire this port writes")
        p = self._whole(a, f)
        return FloatPlan(self.name, len(p), True, payload=p)

    def _whole(self, a: np.ndarray, f: Fmt) -> bytes:
        p = self.payload(a, f)
        assert p is not None  # no limit: always written
        return p

    def encode(self, out: bytearray, a: np.ndarray, f: Fmt, plan: FloatPlan) -> None:
        out += plan.payload if plan.payload is not None else self._whole(a, f)

    def read(self, r: ByteReader, f: Fmt, kind: int, expect: int | None, copy: bool) -> np.ndarray:
        c, first, body = _header(r, f, expect)
        out = alloc.empty(c, f.udt)
        if c:
            out[0] = np.frombuffer(first, dtype=f.udt)[0]
        if body is not None:
            start = r.pos - body.shape[0]
            if self.chimp:
                rc = kchimp.chimp_decode(body, out[0], out)
            else:
                rc = kgor.gorilla_decode(body, 8 * f.width, out[0], out)
            check(r, int(rc), "Chimp128 body" if self.chimp else "Gorilla body", start)
        return out.view(f.fdt)

    def skip(self, r: ByteReader, f: Fmt, kind: int) -> None:
        _header(r, f, None)


class Gorilla(_XorStream):
    name = "gorilla"
    chimp = False
    wire = ((int(QPackTag.GORILLA), int(Kind.F64)), (int(QPackTag.GORILLA), int(Kind.F32)))

    def gate(self, u: np.ndarray, f: Fmt) -> bool:
        """pickF64Codec / pickF32Codec: avg(repeat 1, else meaningful + 14 (f32: 11)) + 1 < 48 (24)."""
        if u.shape[0] < 8:
            return False
        xs = _xor_pairs(u)
        over = 14 if f.width == 8 else 11
        total = sum(1 if x == 0 else x.bit_length() - ((x & -x).bit_length() - 1) + over for x in xs)
        return total // len(xs) + 1 < (48 if f.width == 8 else 24)


class Chimp(_XorStream):
    name = "chimp"
    chimp = True
    wire = ((int(QPackTag.GORILLA), KIND_0F),)

    def gate(self, u: np.ndarray, f: Fmt) -> bool:
        """pickChimpF64: avg(repeat 9, else 5 + 64 - roundedLZ) < 58 bits/value."""
        if u.shape[0] < 8:
            return False
        xs = _xor_pairs(u)
        total = sum(9 if x == 0 else 69 - _CHIMP_ROUND[64 - x.bit_length()] for x in xs)
        return total // len(xs) < 58


GORILLA = Gorilla()
CHIMP = Chimp()
