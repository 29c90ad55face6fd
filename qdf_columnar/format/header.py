"""The 5-byte qdf v1 header: ``51 44 46 01 <flags>``, and the whole-body entropy pass.

Unknown version bytes and reserved flag bits are rejected. With FlagRANS everything
after the header is one tANS/FSE blob (qdf-wire-v1.md §2.8): :func:`open_body`
undoes it for readers and :func:`finish_body` applies it for writers when the
option asks and the reference's rules allow (body >= 512 B, result strictly smaller).
"""

from __future__ import annotations

from ..errors import DecodeError, TruncatedError, UnsupportedVersionError
from .tags import HEADER_SIZE, KNOWN_FLAGS, MAGIC, VERSION, Flag

_HEADERS = [MAGIC + bytes((VERSION, f)) for f in range(256)]
_PREFIX = MAGIC + bytes((VERSION,))
_RANS = int(Flag.RANS)
#: The first bytes of a ``.qdf`` file (``qdf_columnar.io.layout.MAGIC``): told apart so the
#: error can point to ``read_qdf`` instead of reporting "wire version 67".
FILE_MAGIC = b"QDFC"


def pack_header(flags: int) -> bytearray:
    """A new output buffer holding the header with ``flags``."""
    return bytearray(_HEADERS[flags])


def read_header(buf: bytes | bytearray | memoryview) -> int:
    """Validate the header at the start of ``buf`` and return its flags byte."""
    if len(buf) >= HEADER_SIZE and buf[:4] == _PREFIX and not buf[4] & ~KNOWN_FLAGS:
        return buf[4]  # the common case, without building error context
    n = len(buf)
    head = bytes(buf[:HEADER_SIZE])
    # A strict prefix of a valid header is truncation, anything else is not qdf.
    if head[: min(n, 3)] != MAGIC[: min(n, 3)]:
        raise DecodeError(f"not a qdf buffer: magic is {head[:3].hex(' ')}, expected 51 44 46", offset=0)
    if n < HEADER_SIZE:
        raise TruncatedError(f"input ends inside the 5-byte header ({n} bytes)", offset=n)
    if head[:4] == FILE_MAGIC:
        raise DecodeError(
            "these bytes are a .qdf file (row groups and a footer), not one qdf v1 buffer: read them with "
            "qdf.read_qdf(path_or_bytes) or qdf.QdfFile(...)", offset=0)
    if head[3] != VERSION:
        raise UnsupportedVersionError(f"qdf wire version {head[3]} is not supported (this reads version 1)", offset=3)
    flags = head[4]
    if flags & ~KNOWN_FLAGS:
        raise UnsupportedVersionError(f"reserved header flag bits set: {flags:#04x}", offset=4)
    return flags


def open_body(buf: bytes | bytearray | memoryview) -> tuple[int, bytes | bytearray | memoryview]:
    """Validate the header; return (flags without RANS, a buffer whose body is plain v1)."""
    flags = read_header(buf)
    if not flags & _RANS:
        return flags, buf
    from ..codecs.entropy import entropy_decode

    body = entropy_decode(memoryview(buf)[HEADER_SIZE:], offset=HEADER_SIZE)
    return flags & ~Flag.RANS, bytes(buf[:HEADER_SIZE]) + body


#: With a column index, the entropy pass must save at least this share of the body.
#: An entropy-coded body has to be decoded whole before Select / Where can seek to a
#: column; on the bench fixtures the pass saves 0-0.8 % on numeric / dictionary-heavy
#: batches (not worth losing the seek) and 5-12 % on text-heavy ones (docs/FORMAT.md §1.6).
ENTROPY_MIN_GAIN_WITH_INDEX = 0.03


def finish_body(out: bytearray, *, entropy: bool, min_gain: float = 0.0) -> bytes:
    """The finished buffer: with ``entropy``, entropy-code the body when that saves
    more than ``min_gain`` of it (any saving at all when 0, as the reference)."""
    if entropy:
        from ..codecs.entropy import entropy_encode

        blob = entropy_encode(memoryview(out)[HEADER_SIZE:], min_gain=min_gain)
        if blob is not None:
            return bytes(out[:4]) + bytes((out[4] | Flag.RANS,)) + blob
    return bytes(out)
