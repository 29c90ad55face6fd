"""The v1 whole-body entropy pass (OptRANS → tANS/FSE; qdf-wire-v1.md §2.8).

With ``FlagRANS`` set, everything after the 5-byte header is::

    uvarint(origBodyLen)  blobTag  freqTable  stream

* blobTag 01 = tANS single stream, 05 = tANS 4-way interleaved (bodies >= 4096 B);
  00 / 04 = legacy rANS single / 4-way (decode-only).
* freqTable = 256 uvarints summing to 4096.
* single stream: u32 LE final state + payload; 4-way: 4 u32 LE states, 3 uvarint
  lane lengths (the 4th is the rest), the 4 lane payloads. Lane k holds symbols
  k, k+4, k+8, ...; for rANS the lane payloads are renormalisation bytes read forward.

Encoding follows Go ``Encoder.maybeApplyRANS`` (encoder.go): only for bodies of at
least 512 bytes, only when ``uvarint + blob`` is strictly smaller than the body, and
only when the body stays within the decoder's bound ``64 * frame + 1 MiB`` (frame =
header + blob). Decoding checks that bound before allocating (decoder.go).
"""

from __future__ import annotations

import numpy as np
from qdf_kernels.tans import (
    ERR_STATE,
    rans_decode,
    tans_decode1,
    tans_decode4,
    tans_encode_lanes,
    tans_freqs,
)

from ..errors import CorruptDataError, DecodeError, TruncatedError, UnknownCodecError
from ..format.reader import ByteReader
from ..format.varint import write_uvarint

__all__ = ["entropy_encode", "entropy_decode", "order0_bytes", "MIN_BODY", "decode_bound"]

HEADER_LEN = 5
#: Bodies below this are never entropy coded (Go ransMinBytes).
MIN_BODY = 512
#: Bodies at or above this use the 4-way interleaved layout (Go interleaveMinBytes).
INTERLEAVE_MIN = 4096
TABLE_SIZE = 4096
TAG_RANS_SINGLE, TAG_TANS_SINGLE, TAG_RANS_INTER4, TAG_TANS_INTER4 = 0, 1, 4, 5
_PAD = 8  # zero bytes in front of every lane: the tANS decoder reads zeros past a lane front


def decode_bound(frame_len: int) -> int:
    """Largest original body length a frame of ``frame_len`` bytes may declare (Go decoder.go)."""
    return frame_len * 64 + (1 << 20)


def entropy_encode(body: bytes | memoryview, *, min_gain: float = 0.0) -> bytes | None:
    """Return ``uvarint(len) tag table stream`` for ``body``, or None where Go keeps it plain.

    ``min_gain`` > 0 also keeps the body plain unless the pass saves at least that
    fraction of it; the byte histogram's entropy bounds the gain, so a hopeless body
    is not even encoded.
    """
    src = np.frombuffer(body, dtype=np.uint8)
    n = src.shape[0]
    if n < MIN_BODY:
        return None
    limit = n * (1.0 - min_gain)
    if min_gain > 0 and order0_bytes(src) > limit:
        return None
    freq = np.empty(256, dtype=np.uint32)
    tans_freqs(src, freq)
    lanes = 4 if n >= INTERLEAVE_MIN else 1
    stride = (-(-n // lanes) * 12 + 7) // 8 + 1  # 12 bits per symbol at most + end-mark byte
    out = np.empty(stride * lanes, dtype=np.uint8)
    lens = np.zeros(4, dtype=np.int64)
    states = np.zeros(4, dtype=np.uint32)
    tans_encode_lanes(src, freq, lanes, out, stride, lens, states)

    blob = bytearray()
    write_uvarint(blob, n)
    blob.append(TAG_TANS_INTER4 if lanes == 4 else TAG_TANS_SINGLE)
    for f in freq.tolist():
        write_uvarint(blob, f)
    blob += states[:lanes].astype("<u4").tobytes()
    for k in range(lanes - 1):
        write_uvarint(blob, int(lens[k]))
    for k in range(lanes):
        blob += out[k * stride : k * stride + int(lens[k])].tobytes()
    if len(blob) >= n or len(blob) > limit:
        return None  # no (or not enough) win: the body stays plain
    if n > decode_bound(HEADER_LEN + len(blob)):
        return None  # the decoder would reject it (compresses better than ~64x)
    return bytes(blob)


def order0_bytes(body: np.ndarray) -> float:
    """The order-0 entropy of the bytes of ``body`` (a uint8 array), in bytes: a lower
    bound of what any byte-wise entropy coder, the tANS pass included, can reach."""
    n = int(body.shape[0])
    if n == 0:
        return 0.0
    f = np.bincount(body, minlength=256)
    f = f[f > 0].astype(np.float64)
    return float(np.sum(f * np.log2(n / f))) / 8


def entropy_decode(blob: bytes | memoryview, *, offset: int = HEADER_LEN) -> bytes:
    """Invert :func:`entropy_encode` (also reads legacy rANS blobs); return the plain body.

    ``offset`` is where ``blob`` starts in the whole buffer; it only shifts the byte
    offsets reported in errors. Raises TruncatedError / CorruptDataError.
    """
    try:
        return _decode(ByteReader(blob))
    except DecodeError as exc:
        pos = None if exc.offset is None else exc.offset + offset
        raise type(exc)(exc.reason, column=exc.column, offset=pos, row_group=exc.row_group) from None


def _decode(r: ByteReader) -> bytes:
    n = r.uvarint("the entropy-coded body length")
    if n > decode_bound(HEADER_LEN + r.end):
        raise r.corrupt(f"entropy-coded body length {n} exceeds the bound for a {HEADER_LEN + r.end}-byte frame", 0)
    if n == 0:
        return b""  # Go returns an empty body without looking at the rest
    tag_at = r.pos
    tag = r.u8("the entropy blob tag")
    if tag not in (TAG_RANS_SINGLE, TAG_TANS_SINGLE, TAG_RANS_INTER4, TAG_TANS_INTER4):
        raise UnknownCodecError(f"unknown entropy blob tag 0x{tag:02X}", offset=tag_at)
    freq = _read_table(r)
    lanes = 4 if tag in (TAG_RANS_INTER4, TAG_TANS_INTER4) else 1
    states = np.zeros(4, dtype=np.uint32)
    r.need(4 * lanes, "the entropy stream states")
    for k in range(lanes):
        states[k] = r.u32("an entropy stream state")
    lens = [0, 0, 0, 0]
    for k in range(lanes - 1):
        at = r.pos
        ln = r.uvarint("an entropy lane length")
        if ln > r.remaining:
            raise TruncatedError(f"entropy lane {k} declares {ln} bytes but only {r.remaining} remain", offset=at)
        lens[k] = ln
    start = r.pos
    rest = r.remaining - sum(lens[: lanes - 1])
    if rest < 0:
        raise TruncatedError("entropy lane lengths exceed the input", offset=start)
    lens[lanes - 1] = rest
    out = np.empty(n, dtype=np.uint8)
    src = r.array()

    if tag in (TAG_RANS_SINGLE, TAG_RANS_INTER4):
        offs = np.array([start + sum(lens[:k]) for k in range(lanes)], dtype=np.int64)
        ends = offs + np.array(lens[:lanes], dtype=np.int64)
        if rans_decode(src, offs, ends, states[:lanes], freq, out) < 0:
            raise TruncatedError("legacy rANS stream ends before the declared body length", offset=r.end)
        return out.tobytes()

    if lanes == 1 and rest == 0:
        raise TruncatedError("tANS stream has no payload", offset=start)
    # Copy the lanes into one buffer with 8 zero bytes before each (see kernels/tans.py).
    padded = np.zeros(sum(lens) + _PAD * lanes, dtype=np.uint8)
    bases = np.zeros(4, dtype=np.int64)
    pos, at = 0, start
    for k in range(lanes):
        bases[k] = pos + _PAD
        padded[pos + _PAD : pos + _PAD + lens[k]] = src[at : at + lens[k]]
        pos += _PAD + lens[k]
        at += lens[k]
    if lanes == 1:
        st = tans_decode1(padded, bases[0], lens[0], states[0], freq, out)
    else:
        st = tans_decode4(padded, bases, np.array(lens, dtype=np.int64), states, freq, out)
    if st == ERR_STATE:
        raise CorruptDataError("tANS stream does not end in its initial state (truncated or corrupt)", offset=start)
    if st < 0:
        raise CorruptDataError("tANS lane has no end mark in its last byte", offset=start)
    return out.tobytes()


def _read_table(r: ByteReader) -> np.ndarray:
    """256 uvarint frequencies, each <= 4096, summing to exactly 4096 (Go parseTable)."""
    at = r.pos
    freq = np.empty(256, dtype=np.uint32)
    total = 0
    for s in range(256):
        v = r.uvarint("the entropy frequency table")
        if v > TABLE_SIZE:
            raise r.corrupt(f"frequency {v} of byte 0x{s:02X} exceeds {TABLE_SIZE}", r.pos - 1)
        freq[s] = v
        total += v
    if total != TABLE_SIZE:
        raise r.corrupt(f"frequency table sums to {total}, not {TABLE_SIZE}", at)
    return freq
