"""Per-buffer encode / decode state shared by the row-major and columnar writers.

One :class:`EncodeContext` lives for one ``dumps`` call (or one stream); it
carries the options, the Dense writer state and the flags the container code
must report back (``col_index_used`` -> FlagColIndex back-patch). The
:class:`DecodeContext` mirrors it on the read side.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ..options import Options
from .dense import DenseReader, DenseWriter

__all__ = ["MAX_DEPTH", "EncodeContext", "DecodeContext", "ensure_recursion_room"]

#: Nesting limit on both sides (Go DefaultMaxDepth); deeper input is rejected
#: rather than exhausting the interpreter stack.
MAX_DEPTH = 10_000

# Python frames per nesting level on the deepest path (read_value -> handler -> reader -> comprehension), with room.
_FRAMES_PER_LEVEL = 6


def ensure_recursion_room(max_depth: int) -> None:
    # Both directions recurse once per nesting level. CPython >= 3.11 runs
    # Python-to-Python calls without growing the C stack, so raising the
    # interpreter's frame limit is safe; it is only ever raised, never lowered,
    # because another thread may be deep inside a call.
    need = max_depth * _FRAMES_PER_LEVEL + 2000
    if sys.getrecursionlimit() < need:
        sys.setrecursionlimit(need)


@dataclass
class EncodeContext:
    """Encoder state for one buffer."""

    opts: Options
    dense: DenseWriter = field(default=None)  # type: ignore[assignment]
    #: Set by the columnar writer when it emitted a column index; the caller
    #: then ORs FlagColIndex into header byte 4 (Go backpatches the same way).
    col_index_used: bool = False
    depth: int = 0
    max_depth: int = MAX_DEPTH
    #: True while the elements of a list are written: like Go's ``inRepeated``, the
    #: string-delta form (F2) is only offered to map-shape fields there.
    in_repeated: bool = False

    def __post_init__(self) -> None:
        self.opts = Options(self.opts)
        if self.dense is None:
            self.dense = DenseWriter(self.opts)


@dataclass
class DecodeContext:
    """Decoder state for one buffer."""

    flags: int = 0
    dense: DenseReader = field(default_factory=DenseReader)
    opts: Options = Options.NONE  # unknown on decode (options are never on the wire); kept for symmetry
    depth: int = 0
    max_depth: int = MAX_DEPTH

    def __post_init__(self) -> None:
        # Whoever holds a context may recurse max_depth levels (read_value): decode() of a
        # row-major batch, hybrid containers, row groups... not only loads(), which used to
        # be the one caller raising the limit, so a few hundred nested lists passed to
        # decode() hit the interpreter's default limit as a bare RecursionError.
        ensure_recursion_room(self.max_depth)
