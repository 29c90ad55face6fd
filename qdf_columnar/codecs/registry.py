"""Every integer, float, bool and string-column codec, registered in one place.

The picker tries :data:`INT_CANDIDATES` in this order and a candidate replaces the
running best only when *strictly* smaller, so ties keep the earlier codec and the
output matches the Go library's choice byte for byte (raw < FOR < Delta+FOR < RLE <
Dict < PFOR). :data:`INT_CODECS` adds the containers the driver writes by measuring
(F0 PackBlock). Readers dispatch on the tag through :data:`INT_BY_TAG`; ``force=``
names and explain's reference names come from the units.

String column bodies (:mod:`.strings`): the picker takes the first unit of
:data:`STRING_REFERENCE_ORDER` whose reference gate passes, then sizes
:data:`STRING_CANDIDATES` in order and keeps a strictly smaller one (ties keep the
earlier choice); the reader dispatches on the body's first byte through
:data:`STRING_BY_TAG`, and a byte that is no block tag starts per-value strings
(:data:`STRING_UNTAGGED`).

Nested columns (:mod:`.nested`): :data:`NESTED_CODECS` are the shapes a list, struct or
map column is shredded by; the plan (``nested/plan.py``) gives each nested type to the
first unit whose ``applies`` passes (their conditions do not overlap).

Adding a codec: one module under ``ints/``, ``floats/``, ``strings/`` or ``nested/``
following that folder's ``unit.py`` contract, its kernel, its tests, and one line here.
"""

from __future__ import annotations

from ..format.tags import QPackTag
from .bools import BOOL, PackBool
from .floats.alp import ALP
from .floats.alprd import ALPRD
from .floats.raw import RAW as RAW_FLOAT
from .floats.unit import FloatCodec
from .floats.xor import CHIMP, GORILLA
from .ints.blocks import BLOCK
from .ints.delta import DELTA
from .ints.dictionary import DICT
from .ints.frame import FOR
from .ints.patched import PFOR
from .ints.raw import RAW
from .ints.runs import RLE
from .ints.unit import IntCodec
from .nested.lists import LIST
from .nested.split_map import SPLIT_ENTRIES
from .nested.struct import STRUCT
from .nested.unit import NestedCodec
from .strings.alpha import ALPHA
from .strings.const import CONST
from .strings.dictionary import DICTIONARY
from .strings.fsst import FSST
from .strings.per_value import PER_VALUE, PerValue
from .strings.slab import SLAB
from .strings.unit import StringCodec

#: The whole-column candidates, in the picker's order (Go's tie-break).
INT_CANDIDATES: tuple[IntCodec, ...] = (RAW, FOR, DELTA, RLE, DICT, PFOR)
#: Every integer codec a payload may use, the containers included.
INT_CODECS: tuple[IntCodec, ...] = (*INT_CANDIDATES, BLOCK)
INT_BY_TAG: dict[int, IntCodec] = {c.tag: c for c in INT_CODECS}
INT_BY_NAME: dict[str, IntCodec] = {c.name: c for c in INT_CODECS}


#: The float candidates, in the picker's order (Go's: raw, ALP, Gorilla, Chimp128, then
#: ALP-RD); :func:`.floats.unit.replaces` says when a later one displaces the best so far.
FLOAT_CANDIDATES: tuple[FloatCodec, ...] = (RAW_FLOAT, ALP, GORILLA, CHIMP, ALPRD)
FLOAT_BY_NAME: dict[str, FloatCodec] = {c.name: c for c in FLOAT_CANDIDATES}
#: Readers by (tag, kind byte).
FLOAT_BY_WIRE: dict[tuple[int, int], FloatCodec] = {w: c for c in FLOAT_CANDIDATES for w in c.wire}
#: The bool codecs (one on the v1 wire).
BOOL_CODECS: tuple[PackBool, ...] = (BOOL,)
BOOL_BY_TAG: dict[int, PackBool] = {c.tag: c for c in BOOL_CODECS}

#: The reference writer's order (writeStringColumn): the first unit whose ``gate`` passes
#: is the reference-order choice; per-value strings' gate always passes.
STRING_REFERENCE_ORDER: tuple[StringCodec, ...] = (DICTIONARY, ALPHA, SLAB, PER_VALUE)
#: Sized after that choice, in this order; a candidate replaces the best so far only when
#: strictly smaller. CASCADE leaves out the units that are not ``self_contained``, and
#: only compression mode and CASCADE try the ``compression_only`` ones.
STRING_CANDIDATES: tuple[StringCodec, ...] = (DICTIONARY, ALPHA, SLAB, PER_VALUE, FSST)
#: Every string unit a body may use: the candidates and the read-only F9.
STRING_CODECS: tuple[StringCodec, ...] = (*STRING_CANDIDATES, CONST)
STRING_BY_TAG: dict[int, StringCodec] = {tag: c for c in STRING_CODECS for tag in c.tags}
STRING_BY_NAME: dict[str, StringCodec] = {c.name: c for c in STRING_CODECS}
#: What reads a string column body whose first byte is not a block tag.
STRING_UNTAGGED: PerValue = PER_VALUE
_STRING_REFERENCE_NAMES: dict[int, str] = {tag: ref for c in STRING_CODECS for tag, ref in c.tags.items()}

#: The nested shapes: lists (and maps, as lists of entries), a map's entries split by
#: key, structs.
NESTED_CODECS: tuple[NestedCodec, ...] = (LIST, SPLIT_ENTRIES, STRUCT)
NESTED_BY_NAME: dict[str, NestedCodec] = {c.name: c for c in NESTED_CODECS}

_TAG_NAMES = {
    QPackTag.BOOL: "bool",
    QPackTag.RAW: "raw",
    QPackTag.FOR: "for",
    QPackTag.DELTA_FOR: "delta_for",
    QPackTag.GORILLA: "gorilla",
    QPackTag.RLE: "rle",
    QPackTag.DICT: "dict",
    QPackTag.PFOR: "pfor",
    QPackTag.BLOCK: "block",
    QPackTag.ZONE: "zone",
    QPackTag.ALP: "alp",
}
#: What ``qdf.explain`` prints for a payload tag: the units' reference names, and the
#: zone-chunk container, which is not a codec unit.
_REFERENCE_NAMES: dict[int, str] = {
    **{c.tag: c.reference for c in INT_CODECS},
    **{tag: c.reference for c in FLOAT_CANDIDATES for tag, _ in c.wire if tag != QPackTag.RAW},
    **{c.tag: c.reference for c in BOOL_CODECS},
    QPackTag.ZONE: "ZoneChunk",
}


def payload_name(tag: int) -> str:
    """Short codec name of a QPack tag ("for", "delta_for", ...); "unknown_0xNN" otherwise."""
    try:
        return _TAG_NAMES[QPackTag(tag)]
    except ValueError:
        return f"unknown_0x{tag:02x}"


def reference_name(tag: int) -> str:
    """The reference name of a QPack tag ("PackDeltaFor", ...); :func:`payload_name` for unknown tags."""
    return _REFERENCE_NAMES.get(tag) or payload_name(tag)


def string_reference_name(tag: int) -> str:
    """What ``qdf.explain`` prints for a string column body starting with ``tag``
    ("ColStrDictFC", ...; per-value strings when it is no block tag)."""
    return _STRING_REFERENCE_NAMES.get(tag, STRING_UNTAGGED.reference)
