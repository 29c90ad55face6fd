"""Every qdf v1 byte constant, grouped by the context in which the byte is read.

This is the only module where v1 wire numbers live (docs/FORMAT.md has the same
table; tests/test_format_doc.py checks that the two agree). Groups are per context
because v1 reuses bytes: ``0xF5`` is the dictionary string block as the first byte
of a string column but ``tagStrAlpha`` among row-major values. Names in comments are
the Go reference's identifiers (qdf-wire-v1.md).
"""

from __future__ import annotations

from enum import IntEnum, IntFlag

MAGIC = b"QDF"  # 51 44 46
VERSION = 0x01
HEADER_SIZE = 5


class Flag(IntFlag):
    """Header flag bits (byte 4 of the header); bits 4-7 are reserved and must be 0."""

    DENSE = 0x01  # FlagDense: body may contain Dense state tags
    QPACK = 0x02  # FlagQPack: early hint that QPack slice codecs are used
    RANS = 0x04  # FlagRANS: everything after the header is one entropy-coded blob
    COL_INDEX = 0x08  # FlagColIndex: EF containers carry a u32 length per column


KNOWN_FLAGS = int(Flag.DENSE | Flag.QPACK | Flag.RANS | Flag.COL_INDEX)


class Tag(IntEnum):
    """Row-major value tags (msgpack-shaped, but not msgpack's byte values)."""

    POS_FIXINT_MAX = 0x7F  # 00-7F positive fixint
    FIXSTR = 0x80  # 80-9F, len = low 5 bits
    FIXARR = 0xA0  # A0-BF, count = low 5 bits
    NIL = 0xC0
    FALSE = 0xC1
    TRUE = 0xC2
    UINT8 = 0xC3
    UINT16 = 0xC4
    UINT32 = 0xC5
    UINT64 = 0xC6
    INT8 = 0xC7
    INT16 = 0xC8
    INT32 = 0xC9
    INT64 = 0xCA
    FLOAT32 = 0xCB
    FLOAT64 = 0xCC
    STR8 = 0xCD
    STR16 = 0xCE
    STR32 = 0xCF
    BIN8 = 0xD0
    BIN16 = 0xD1
    BIN32 = 0xD2
    ARR16 = 0xD3
    ARR32 = 0xD4
    MAP8 = 0xD5
    MAP16 = 0xD6
    MAP32 = 0xD7
    NEG_FIXINT = 0xD8  # D8-DF: value = -((tag & 7) + 1)
    TIMESTAMP = 0xF3  # zigzag-uvarint(sec), uvarint(nsec)


class DenseTag(IntEnum):
    """Dense dialect state tags (FlagDense)."""

    INTERN_STR = 0xE0  # tagInternStr: uvarint(len), bytes; assigns the next id
    STATE_REF = 0xE1  # tagStateRef: uvarint(id)
    INTERN_BIN = 0xE2  # tagInternBin: like E0 for []byte (same table)
    STATE_REPEAT = 0xE8  # tagStateRepeat: id == lastID
    STATE_MTF = 0xE9  # tagStateMTF: uvarint(rank) in the 128-slot recency ring
    STATE_PAIR = 0xEA  # tagStatePair: uvarint(0), Markov-1 successor of lastID
    MAP_SHAPE = 0xEC  # tagMapShape: uvarint(shapeID); 0 declares
    STR_DELTA = 0xF2  # tagStrDelta (unconfirmed in the reference source)


class QPackTag(IntEnum):
    """QPack numeric / bool slice payload tags."""

    BOOL = 0xE3  # PackBool
    RAW = 0xE4  # PackRaw
    FOR = 0xE5  # PackFor
    DELTA_FOR = 0xE6  # PackDeltaFor
    GORILLA = 0xE7  # PackGorilla (and Chimp128, kind 0x0F)
    RLE = 0xEB  # PackRLE
    DICT = 0xED  # PackDict
    PFOR = 0xEE  # PackPFor
    BLOCK = 0xF0  # PackBlock (unconfirmed in the reference source)
    ZONE = 0xF1  # ZoneChunk (unconfirmed in the reference source)
    ALP = 0xF4  # PackALP


class Kind(IntEnum):
    """QPack kind byte: low 2 bits log2(width), bits 2-3 family (uint, int, float, special)."""

    U8 = 0x00
    U16 = 0x01
    U32 = 0x02
    U64 = 0x03
    I8 = 0x04
    I16 = 0x05
    I32 = 0x06
    I64 = 0x07
    F32 = 0x0A
    F64 = 0x0B
    PLANE16 = 0x0D
    ALP_RD_F32 = 0x0E
    CHIMP_F64 = 0x0F  # Chimp128 under E7 / ALP-RD f64 under F4


class ContainerTag(IntEnum):
    """Columnar containers."""

    COL_STRUCT = 0xEF  # tagColStruct: pure columnar []struct
    HYBRID_COL_STRUCT = 0xF7  # tagHybridColStruct: columnar + residual row-major fields


class ColKind(IntEnum):
    """Column kind byte in a columnar shape declaration; | NULLABLE for *T columns."""

    INT = 0x00
    UINT = 0x01
    FLOAT64 = 0x02
    BOOL = 0x03
    STRING = 0x04  # string or []byte
    TIME = 0x05
    FLOAT32 = 0x06  # raw 32-bit patterns through the uint codec
    RESIDUAL = 0xFF  # hybrid only


NULLABLE = 0x80


class StrColTag(IntEnum):
    """String-column block tags: only valid as the first byte of a string column body."""

    DICT = 0xF5  # ColStrDict
    FSST = 0xF6  # ColStrFSST
    RAW = 0xF8  # ColStrRaw
    CONST = 0xF9  # ColStrConst
    DICT_FC = 0xFA  # ColStrDictFC (front-coded sorted table)
    ALPHA = 0xFB  # ColStrAlpha
    DICT_Q = 0xFC  # ColStrDictQ (QPack-coded indices)


STR_BLOCK_TAGS = frozenset(int(t) for t in StrColTag)
