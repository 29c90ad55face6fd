"""The float payload reader: dispatches on (tag, kind byte) to the codec units of
:mod:`.registry` (E4 0B / 0A raw, E7 Gorilla / Chimp128, F4 ALP / ALP-RD)."""

from __future__ import annotations

import numpy as np

from ..errors import UnknownCodecError
from ..format.reader import ByteReader
from ..format.tags import Kind, QPackTag
from .floats.unit import F32, F64, FloatCodec, Fmt
from .ints.unit import IntPayload
from .registry import FLOAT_BY_WIRE, payload_name

_FLOAT_TAGS = (int(QPackTag.RAW), int(QPackTag.GORILLA), int(QPackTag.ALP))


def _unit(r: ByteReader) -> tuple[FloatCodec, Fmt, int]:
    """The unit, format and kind of the payload at ``r.pos``, ``r`` left after the kind byte."""
    at = r.pos
    tag = r.u8("a QPack tag")
    if tag not in _FLOAT_TAGS:
        raise UnknownCodecError(f"float payload tag 0x{tag:02x} ({payload_name(tag)}) is not supported",
                                column=r.column, offset=at)
    kat = r.pos
    kind = r.u8("a kind byte")
    unit = FLOAT_BY_WIRE.get((tag, kind))
    if unit is None:
        if tag == QPackTag.RAW:
            raise r.corrupt(f"kind 0x{kind:02x} is not a float kind", kat)
        if tag == QPackTag.ALP and kind == Kind.ALP_RD_F32:
            raise UnknownCodecError("ALP-RD float32 (F4 kind 0x0e) is not supported", column=r.column, offset=kat)
        raise r.corrupt(f"kind 0x{kind:02x} is not valid under tag 0x{tag:02x}", kat)
    return unit, (F32 if kind == Kind.F32 else F64), kind


def read_float(r: ByteReader, expect: int | None, copy: bool) -> np.ndarray:
    """One float payload at ``r.pos`` as float64 / float32 (``copy=False``: raw payloads
    come back as read-only views of the input; compressed ones always decode afresh)."""
    unit, f, kind = _unit(r)
    return unit.read(r, f, kind, expect, copy)


def scan_float(r: ByteReader, expect: int | None, copy: bool) -> IntPayload:
    """Locate one float payload at ``r.pos``, check it as :func:`read_float` does and
    leave ``r`` after it; codecs with a ``scan`` (ALP) decode when ``values()`` or
    ``take(rows)`` asks (only those rows), the others (raw views, Gorilla / Chimp,
    ALP-RD) here."""
    unit, f, kind = _unit(r)
    scan = getattr(unit, "scan", None)
    if scan is not None:
        return scan(r, f, kind, expect, copy)
    return IntPayload(values=unit.read(r, f, kind, expect, copy))


def skip_float(r: ByteReader) -> None:
    """Advance past one float payload, validating headers and counts like the reader."""
    unit, f, kind = _unit(r)
    unit.skip(r, f, kind)
