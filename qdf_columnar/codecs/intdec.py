"""Readers (and skippers) of the v1 QPack integer payloads, dispatching on the tag to
the codec units of :mod:`.registry` (E4 PackRaw, E5 PackFor, E6 PackDeltaFor, EB
PackRLE, ED PackDict, EE PackPFor, F0 PackBlock).

Every count is checked against the bytes that could hold it before anything is
allocated; payloads whose body does not bound the count (zero-width FOR/Delta/PFOR,
one-entry Dict, RLE) are capped at MAX_ROWS unless the caller supplies the expected n.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnknownCodecError
from ..format.reader import ByteReader
from .ints.unit import IntCodec, IntPayload
from .registry import INT_BY_TAG

__all__ = ["IntPayload", "read_int", "scan_int", "skip_int"]


class _ReadEach:
    """The child reader of a container: each inner payload read through the registry."""

    def read(self, r: ByteReader, expect: int | None, copy: bool, depth: int) -> np.ndarray:
        return _unit(r).read(r, expect, copy, depth, self).values()

    def skip(self, r: ByteReader, expect: int | None, depth: int) -> None:
        _unit(r).skip(r, expect, depth, self)


_CHILD = _ReadEach()


def _unit(r: ByteReader) -> IntCodec:
    """The unit of the tag at ``r.pos``, with ``r`` left after the tag."""
    at = r.pos
    tag = r.u8("a QPack tag")
    unit = INT_BY_TAG.get(tag)
    if unit is None:
        raise UnknownCodecError(f"tag 0x{tag:02x} is not an integer QPack payload", column=r.column, offset=at)
    return unit


def read_int(r: ByteReader, expect: int | None, copy: bool, want: bool, depth: int = 0) -> np.ndarray | None:
    """Decode (``want``) or skip one integer payload at ``r.pos``; see qpack.decode_int_payload."""
    if not want:
        skip_int(r, expect, depth)
        return None
    return _CHILD.read(r, expect, copy, depth)


def skip_int(r: ByteReader, expect: int | None = None, depth: int = 0) -> None:
    """Advance past one integer payload, checking it as a read would, decoding nothing."""
    _CHILD.skip(r, expect, depth)


def scan_int(r: ByteReader, expect: int | None, copy: bool = True) -> IntPayload:
    """Locate one integer payload at ``r.pos`` and leave ``r`` after it.

    The structure is checked here exactly as :func:`read_int` checks it, so a damaged
    payload raises now, with its offset; codecs that can (PackFor, PackRaw, PackPFor,
    PackRLE with long runs) decode only when ``values()`` or ``take()`` asks (a bounded,
    infallible unpack), the others here.
    """
    return _unit(r).read(r, expect, copy, 0, _CHILD)
