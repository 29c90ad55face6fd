"""Every integer codec, registered in one place.

The picker tries :data:`INT_CANDIDATES` in this order and a candidate replaces the
running best only when *strictly* smaller, so ties keep the earlier codec and the
output matches the Go library's choice byte for byte (raw < FOR < Delta+FOR < RLE <
Dict < PFOR). :data:`INT_CODECS` adds the containers the driver writes by measuring
(F0 PackBlock). Readers dispatch on the tag through :data:`INT_BY_TAG`; ``force=``
names and explain's reference names come from the units.

Adding an integer codec: one module under ``ints/`` following ``ints/unit.py``'s
contract, its kernel, its tests, and one line here.
"""

from __future__ import annotations

from .ints.blocks import BLOCK
from .ints.delta import DELTA
from .ints.dictionary import DICT
from .ints.frame import FOR
from .ints.patched import PFOR
from .ints.raw import RAW
from .ints.runs import RLE
from .ints.unit import IntCodec

#: The whole-column candidates, in the picker's order (Go's tie-break).
INT_CANDIDATES: tuple[IntCodec, ...] = (RAW, FOR, DELTA, RLE, DICT, PFOR)
#: Every integer codec a payload may use, the containers included.
INT_CODECS: tuple[IntCodec, ...] = (*INT_CANDIDATES, BLOCK)
INT_BY_TAG: dict[int, IntCodec] = {c.tag: c for c in INT_CODECS}
INT_BY_NAME: dict[str, IntCodec] = {c.name: c for c in INT_CODECS}
