"""The 5-byte qdf v1 header: ``51 44 46 01 <flags>``.

Unknown version bytes and reserved flag bits are rejected; an entropy-coded body
(FlagRANS) is recognised and reported as not supported yet rather than misread.
"""

from __future__ import annotations

from ..errors import DecodeError, TruncatedError, UnknownCodecError, UnsupportedVersionError
from .tags import HEADER_SIZE, KNOWN_FLAGS, MAGIC, VERSION, Flag


def pack_header(flags: int) -> bytearray:
    """A new output buffer holding the header with ``flags``."""
    return bytearray(MAGIC + bytes((VERSION, flags)))


def read_header(buf: bytes | bytearray | memoryview) -> int:
    """Validate the header at the start of ``buf`` and return its flags byte."""
    n = len(buf)
    head = bytes(buf[:HEADER_SIZE])
    # A strict prefix of a valid header is truncation, anything else is not qdf.
    if head[: min(n, 3)] != MAGIC[: min(n, 3)]:
        raise DecodeError(f"not a qdf buffer: magic is {head[:3].hex(' ')}, expected 51 44 46", offset=0)
    if n < HEADER_SIZE:
        raise TruncatedError(f"input ends inside the 5-byte header ({n} bytes)", offset=n)
    if head[3] != VERSION:
        raise UnsupportedVersionError(f"qdf wire version {head[3]} is not supported (this reads version 1)", offset=3)
    flags = head[4]
    if flags & ~KNOWN_FLAGS:
        raise UnsupportedVersionError(f"reserved header flag bits set: {flags:#04x}", offset=4)
    if flags & Flag.RANS:
        raise UnknownCodecError(
            "entropy-coded bodies (FlagRANS, compression tier) cannot be decoded by this version yet", offset=4
        )
    return flags
